import Foundation

/// The rules every backend's migrator follows, written once: how a migrations folder is read
/// and how its files are checked against the migrations a store recorded.
///
/// A folder holds one backend's `NNNN_snake_name.sql` files; a sub-folder is another
/// backend's (`Migrations/postgresql/` beside SQLite's files in `Migrations/`) and is skipped.
public enum MigrationPlan {
    /// Reads the `NNNN_snake_name.sql` files in `directory`, in version order. Every other
    /// visible file is an error, so a typo (`0002_scores.SQL`) is not silently skipped; so are
    /// two files with one number and a gap in the numbers.
    public static func load(from directory: URL) throws -> [Migration] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        } catch {
            throw MigrationError(.unreadable, "cannot read the migrations folder \(directory.path): \(error.localizedDescription)")
        }
        var migrations: [Migration] = []
        var malformed: [String] = []
        for fileName in names.sorted() where !fileName.hasPrefix(".") {
            let url = directory.appendingPathComponent(fileName)
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder), isFolder.boolValue { continue }
            guard let (version, name) = parseFileName(fileName) else {
                malformed.append(fileName)
                continue
            }
            guard let bytes = FileManager.default.contents(atPath: url.path) else {
                throw MigrationError(.unreadable, "cannot read migration \(url.path)")
            }
            guard let sql = String(validating: bytes, as: UTF8.self) else {
                throw MigrationError(.unreadable, "migration \(fileName) is not valid UTF-8")
            }
            migrations.append(Migration(version: version, name: name, sql: sql, checksum: SHA256.hexDigest([UInt8](bytes))))
        }
        guard malformed.isEmpty else {
            throw MigrationError(.malformedName, "malformed migration file name(s) in \(directory.path): \(malformed.joined(separator: ", ")); expected NNNN_snake_name.sql, e.g. 0002_scores.sql")
        }
        migrations.sort { $0.version < $1.version }
        for (previous, next) in zip(migrations, migrations.dropFirst()) where previous.version == next.version {
            throw MigrationError(.duplicateVersion, "migrations \(previous.identifier) and \(next.identifier) share the number \(previous.version)")
        }
        for (offset, migration) in migrations.enumerated() where migration.version != offset + 1 {
            let expected = Migration.identifier(version: offset + 1, name: "…")
            throw MigrationError(.gap, "migration numbers have a gap: expected \(expected) before \(migration.identifier)")
        }
        return migrations
    }

    /// `0001_initial.sql` → (1, "initial"); nil for anything else.
    public static func parseFileName(_ fileName: String) -> (Int, String)? {
        let characters = Array(fileName.utf8)
        guard characters.count > 9, fileName.hasSuffix(".sql"), characters[4] == UInt8(ascii: "_"),
              characters[0..<4].allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
              let version = Int(String(decoding: characters[0..<4], as: UTF8.self))
        else { return nil }
        let name = String(decoding: characters[5..<(characters.count - 4)], as: UTF8.self)
        let words = name.split(separator: "_", omittingEmptySubsequences: false)
        let isSnake = words.allSatisfy { word in
            !word.isEmpty && word.utf8.allSatisfy { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
        }
        return isSnake ? (version, name) : nil
    }

    /// Checks the recorded rows against the files and returns the files still to apply.
    /// Throws when they disagree: an applied file edited or renamed, a recorded version with
    /// no file (the store is newer than this build), a new file numbered below the last applied.
    public static func pending(files migrations: [Migration], applied: [AppliedMigration]) throws -> [Migration] {
        let files = Dictionary(uniqueKeysWithValues: migrations.map { ($0.version, $0) })
        for record in applied {
            guard let file = files[record.version] else {
                throw MigrationError(.unknownAppliedVersion, "database is newer than this code: it has migration \(record.identifier) which this build does not know; run a newer build")
            }
            guard file.name == record.name else {
                throw MigrationError(.renamedAfterApplied, "migration \(record.identifier) was applied under that name but its file is now \(file.identifier).sql; rename it back")
            }
            guard file.checksum == record.checksum else {
                throw MigrationError(.editedAfterApplied, "migration \(record.identifier) was edited after it was applied; restore the file and put the change in a new migration")
            }
        }
        let appliedVersions = Set(applied.map(\.version))
        let pending = migrations.filter { !appliedVersions.contains($0.version) }
        if let latest = applied.last, let early = pending.first, early.version < latest.version {
            throw MigrationError(.outOfOrder, "migration \(early.identifier) is new but \(latest.identifier) is already applied; number new migrations after the last one")
        }
        return pending
    }
}
