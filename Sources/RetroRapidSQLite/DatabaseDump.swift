/// The whole database as text, for tests on either side of the storage interface (the
/// SQLite tests and the contract tests' SQLite backend) to compare before and after.
extension Database {
    /// Every table's schema and rows, as text: equal before and after means nothing changed.
    public func dump() throws -> [String] {
        let tables = try prepare("SELECT name, sql FROM sqlite_schema WHERE type = 'table' ORDER BY name")
            .query { ($0.string(at: 0), $0.string(at: 1)) }
        var lines: [String] = []
        for (name, sql) in tables {
            lines.append(sql)
            lines += try prepare("SELECT * FROM \"\(name)\" ORDER BY rowid").query { row in
                (0..<row.columnCount).map { "\(row.value(at: $0))" }.joined(separator: "|")
            }
        }
        let others = try prepare("SELECT sql FROM sqlite_schema WHERE type <> 'table' AND sql IS NOT NULL ORDER BY name")
            .query { $0.string(at: 0) }
        return lines + others
    }
}
