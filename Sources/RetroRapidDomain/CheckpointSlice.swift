/// A round's checkpoints of many games as one text, how PostgreSQL stores a slice of a round
/// in one `checkpoint_slices` row instead of a `game_checkpoints` row per game
/// (docs/STORAGE.md, "Checkpoint slices"). A line per game:
///
///     <bytes of the id>:<id> <steps> <moves before> <play time, ms> <moves>\n
///
/// the moves as ``CheckpointLog/encode(_:)`` writes them. The id goes with its length, so no
/// id can end a field early whatever it holds. Text, not bytes, so an operator can read a row
/// with psql.
///
/// What ``decode(_:)`` reads comes from the database and is checked as hostile: every length
/// and number is bounded before use, and a text that breaks the format anywhere is refused
/// whole (the caller skips that row).
public enum CheckpointSlice {
    /// One line read back: a game's checkpoint, its moves still as stored.
    public struct Entry: Sendable, Equatable {
        public var publicID: String
        public var steps: Int
        public var movesBefore: Int
        public var moves: String
        public var durationMilliseconds: Int

        public init(publicID: String, steps: Int, movesBefore: Int, moves: String, durationMilliseconds: Int) {
            self.publicID = publicID
            self.steps = steps
            self.movesBefore = movesBefore
            self.moves = moves
            self.durationMilliseconds = durationMilliseconds
        }
    }

    /// `batch` as one slice's text, appended to `bytes` (UTF-8).
    public static func encode(_ batch: [GameCheckpoint], appendingTo bytes: inout [UInt8]) {
        for checkpoint in batch {
            CheckpointLog.appendDecimal(checkpoint.publicID.utf8.count, to: &bytes)
            bytes.append(UInt8(ascii: ":"))
            bytes.append(contentsOf: checkpoint.publicID.utf8)
            bytes.append(UInt8(ascii: " "))
            CheckpointLog.appendDecimal(max(0, checkpoint.steps), to: &bytes)
            bytes.append(UInt8(ascii: " "))
            CheckpointLog.appendDecimal(max(0, checkpoint.movesBefore), to: &bytes)
            bytes.append(UInt8(ascii: " "))
            CheckpointLog.appendDecimal(max(0, checkpoint.durationMilliseconds), to: &bytes)
            bytes.append(UInt8(ascii: " "))
            CheckpointLog.encode(checkpoint.moves, appendingTo: &bytes)
            bytes.append(UInt8(ascii: "\n"))
        }
    }

    /// The entries of a slice's text, in order.
    /// - Throws: `StoreError.unreadable` naming where the text breaks the format.
    public static func decode(_ text: String) throws -> [Entry] {
        var text = text
        return try text.withUTF8 { bytes in
            var reader = Reader(bytes: bytes)
            var entries: [Entry] = []
            while !reader.atEnd {
                let idLength = try reader.number(endingWith: UInt8(ascii: ":"))
                let publicID = try reader.text(count: idLength)
                try reader.expect(UInt8(ascii: " "))
                let steps = try reader.number(endingWith: UInt8(ascii: " "))
                let movesBefore = try reader.number(endingWith: UInt8(ascii: " "))
                let duration = try reader.number(endingWith: UInt8(ascii: " "))
                let moves = try reader.text(endingWith: UInt8(ascii: "\n"))
                entries.append(Entry(publicID: publicID, steps: steps, movesBefore: movesBefore, moves: moves,
                                     durationMilliseconds: duration))
            }
            return entries
        }
    }

    /// Reads a slice's bytes front to back; every read checks what is left first.
    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var offset = 0

        var atEnd: Bool { offset >= bytes.count }

        /// A decimal of at most 18 digits (so it fits an Int with no overflow), then `end`.
        mutating func number(endingWith end: UInt8) throws -> Int {
            var value = 0
            var digits = 0
            while offset < bytes.count, bytes[offset] != end {
                let byte = bytes[offset]
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), digits < 18 else {
                    throw failure("a number")
                }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
                digits += 1
                offset += 1
            }
            guard digits > 0 else { throw failure("a number") }
            try expect(end)
            return value
        }

        mutating func text(count: Int) throws -> String {
            guard count > 0, count <= bytes.count - offset else { throw failure("an id of the length given") }
            defer { offset += count }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[offset..<offset + count]), as: UTF8.self)
        }

        /// The bytes up to `end`, which is read too.
        mutating func text(endingWith end: UInt8) throws -> String {
            let start = offset
            while offset < bytes.count, bytes[offset] != end { offset += 1 }
            let value = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<offset]), as: UTF8.self)
            try expect(end)
            return value
        }

        mutating func expect(_ byte: UInt8) throws {
            guard offset < bytes.count, bytes[offset] == byte else {
                throw failure("'\(Character(Unicode.Scalar(byte)))'")
            }
            offset += 1
        }

        func failure(_ wanted: String) -> StoreError {
            StoreError.unreadable("a checkpoint slice breaks off at byte \(offset): \(wanted) was expected")
        }
    }
}
