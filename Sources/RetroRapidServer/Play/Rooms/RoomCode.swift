/// A room's invite code: six characters from an alphabet without the look-alikes 0/O and
/// 1/I, so it can be read aloud, typed from a phone or copied by hand. Read case-insensitively
/// with spaces and dashes ignored ("k7q-xm2" is K7QXM2).
///
/// 32 characters (a power of two, so each is drawn without bias from 5 random bits) and 6 of
/// them: about a billion codes, so a guessed code finds a room about once in 200,000 tries
/// with 5,000 rooms open (`--max-rooms`).
struct RoomCode: Hashable, Sendable, Comparable, CustomStringConvertible {
    static let alphabet = Array("23456789ABCDEFGHJKLMNPQRSTUVWXYZ")
    static let length = 6

    /// Always `length` characters of `alphabet`, upper case.
    let text: String

    var description: String { text }

    /// The code a person typed or a link carried; nil when it is not one (wrong length, a
    /// character outside the alphabet).
    init?(reading typed: String) {
        var characters: [Character] = []
        for character in typed.uppercased() where character != " " && character != "-" {
            guard Self.alphabet.contains(character), characters.count < Self.length else { return nil }
            characters.append(character)
        }
        guard characters.count == Self.length else { return nil }
        text = String(characters)
    }

    /// A new code from `random` (the system's CSPRNG in the server; a seeded one in tests).
    init(random: () -> UInt64) {
        var bits = random()
        var characters: [Character] = []
        for _ in 0..<Self.length {
            characters.append(Self.alphabet[Int(bits & 31)])
            bits >>= 5
        }
        text = String(characters)
    }

    static func < (a: RoomCode, b: RoomCode) -> Bool { a.text < b.text }
}
