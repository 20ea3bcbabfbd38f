import Foundation
import RetroRapidPostgreSQL

/// The PostgreSQL server the tests are given: `RETRORAPID_TEST_POSTGRES_URL` names a throwaway
/// server on loopback that `scripts/with-test-postgres.sh` started (`make test` does), as its
/// superuser. Each test gets a database of its own on it, created empty and dropped after.
public enum TestPostgres {
    /// The server's URL, or nil when the tests were run without one.
    public static var adminURL: String? {
        ProcessInfo.processInfo.environment["RETRORAPID_TEST_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// True when the run must have a server (`make test` sets `RETRORAPID_REQUIRE_POSTGRES=1`):
    /// then a missing URL fails the run instead of leaving the PostgreSQL tests out.
    public static var isRequired: Bool {
        ProcessInfo.processInfo.environment["RETRORAPID_REQUIRE_POSTGRES"] == "1"
    }

    /// Whether the PostgreSQL tests run: a server was given.
    public static var isAvailable: Bool { adminURL != nil }

    /// Runs `body` with the URL of a new, empty database, dropped afterwards (even when
    /// `body` throws, and with any connection `body` left open).
    public static func withDatabase<T>(_ body: (_ url: String) throws -> T) throws -> T {
        let (url, drop) = try createDatabase()
        defer { drop() }
        return try body(url)
    }

    /// Makes a new, empty database and returns its URL and the way to drop it.
    public static func createDatabase() throws -> (url: String, drop: () -> Void) {
        guard let adminURL else { throw PostgresError(sqlState: "", message: "RETRORAPID_TEST_POSTGRES_URL is not set") }
        let name = "rr_test_" + (0..<12).map { _ in String("abcdefghijklmnopqrstuvwxyz0123456789".randomElement()!) }.joined()
        let admin = try PostgresConnection(conninfo: adminURL)
        try admin.executeScript("CREATE DATABASE \(name)")
        guard var components = URLComponents(string: adminURL) else {
            throw PostgresError(sqlState: "", message: "RETRORAPID_TEST_POSTGRES_URL is not a URL")
        }
        components.path = "/" + name
        return (components.string!, { try? admin.executeScript("DROP DATABASE IF EXISTS \(name) WITH (FORCE)") })
    }
}
