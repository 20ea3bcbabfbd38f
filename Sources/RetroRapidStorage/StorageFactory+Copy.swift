import Foundation
import RetroRapidDomain
import RetroRapidPostgreSQL
import RetroRapidSQLite
import RetroRapidSupport

extension StorageFactory {
    /// Why `copy(from:to:migrationsPath:progress:)` copied nothing: a ``StorageCopier/Refusal``,
    /// or PostgreSQL failing (unreachable, or an error that rolled the copy back), in words
    /// that never hold the password.
    public struct CopyFailure: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// `retrorapid copy-database`: copies the SQLite store `source` (opened by ``open(_:ifMissing:durability:)``,
    /// not migrated) into the empty PostgreSQL database `target`, whose migrations are in
    /// `migrationsPath`'s `postgresql` folder. The executable names no backend: the backends
    /// meet here, where the factory that picks them lives.
    public static func copy(from source: any StorageConnection, to target: DatabaseURL.PostgreSQL, migrationsPath: String,
                            progress: (StorageCopier.Progress) -> Void) throws -> StorageCopier.Report {
        guard let sqlite = source as? SQLiteStorage else {
            throw CopyFailure(description: "the source \(source.location) is not a SQLite database; copy-database copies SQLite into PostgreSQL")
        }
        let connection: PostgresConnection
        do {
            connection = try PostgresConnection(conninfo: target.conninfo)
        } catch let error as PostgresError {
            throw CopyFailure(description: "cannot reach the PostgreSQL database \(target.redacted), so nothing was copied: \(error.message)")
        }
        let storage = PostgresStorage(connection: connection,
                                      migrations: URL(fileURLWithPath: migrationsPath, isDirectory: true).appendingPathComponent("postgresql", isDirectory: true),
                                      location: target.redacted)
        do {
            return try StorageCopier(from: sqlite, to: storage).copy(progress: progress)
        } catch let refusal as StorageCopier.Refusal {
            throw CopyFailure(description: refusal.message)
        } catch let error as PostgresError {
            throw CopyFailure(description: "copying to \(target.redacted) failed and was rolled back, so nothing was copied: \(error.message)")
        }
    }
}
