/// Rows in PostgreSQL's binary COPY format (`COPY … FROM STDIN (FORMAT binary)`), built as
/// bytes for ``PostgresConnection/copyIn(_:_:)``: the header, then per row its field count
/// and each field as a length and the value (the connection sends the trailer). Nothing is
/// parsed as text on either side, and no value needs quoting: a text goes as its UTF-8 bytes
/// whatever they hold. The values are the server's own (a checkpoint's moves), never a
/// client's bytes, and far below the 1 GB PostgreSQL takes in a field.
///
/// Why: the hot table of running games takes thousands of rows a second, and building array
/// literals (quoting every element) and having the server parse them cost more than writing
/// the rows (docs/BENCHMARKS.md, "Checkpoints on PostgreSQL").
///
/// The caller writes exactly the fields the COPY's column list names, in its order, with the
/// types the columns have: `bigint` for ``appendBigint(_:)``, `text` for ``appendText(_:)``.
/// The server checks each row's field count and every value against its column.
public struct PostgresBinaryCopy {
    /// The header and the encoded rows so far.
    public private(set) var bytes: [UInt8]
    /// Rows begun so far.
    public private(set) var rows = 0

    /// "PGCOPY\n\377\r\n\0", then flags 0 (no OIDs) and a header extension of 0 bytes.
    private static let header: [UInt8] = [0x50, 0x47, 0x43, 0x4F, 0x50, 0x59, 0x0A, 0xFF, 0x0D, 0x0A, 0x00] + [0, 0, 0, 0] + [0, 0, 0, 0]

    /// - Parameter capacity: bytes to reserve (a guess of the whole buffer's size).
    public init(reservingCapacity capacity: Int = 0) {
        bytes = []
        bytes.reserveCapacity(Self.header.count + capacity + 2)
        bytes += Self.header
    }

    /// Begins a row of `fields` fields (the COPY's column count).
    public mutating func beginRow(fields: Int16) {
        append(UInt16(bitPattern: fields))
        rows += 1
    }

    /// A `bigint` field: 8 bytes, big-endian two's complement.
    public mutating func appendBigint(_ value: Int64) {
        append(UInt32(8))
        append(UInt64(bitPattern: value))
    }

    /// A `text` field: its UTF-8 bytes (the connection's client encoding is UTF-8).
    public mutating func appendText(_ value: String) {
        var value = value
        value.withUTF8 { appendText(bytesOf: UnsafeRawBufferPointer($0)) }
    }

    /// A `text` field written by `write` straight into the buffer (no String made first);
    /// its length is filled in afterwards.
    public mutating func appendText(writing write: (inout [UInt8]) -> Void) {
        let lengthAt = bytes.count
        append(UInt32(0))
        write(&bytes)
        let length = UInt32(bytes.count - lengthAt - 4)
        for index in 0..<4 { bytes[lengthAt + index] = UInt8(truncatingIfNeeded: length >> (24 - 8 * UInt32(index))) }
    }

    /// What ends the stream after the last row: a field count of -1.
    static let trailer: [UInt8] = [0xFF, 0xFF]

    private mutating func appendText(bytesOf raw: UnsafeRawBufferPointer) {
        append(UInt32(raw.count))
        bytes.append(contentsOf: raw)
    }

    private mutating func append(_ value: UInt16) {
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
        bytes.append(UInt8(truncatingIfNeeded: value))
    }

    private mutating func append(_ value: UInt32) {
        for shift in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    private mutating func append(_ value: UInt64) {
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }
}
