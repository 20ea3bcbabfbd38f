// swift-tools-version:6.0
// RetroRapid Online. No outside Swift packages: only the toolchain and C libraries
// from Debian (libwebsockets-dev, libsqlite3-dev, libpq-dev, and libev-dev, which
// libwebsockets-dev depends on) through system-library targets.
import PackageDescription

let package = Package(
    name: "RetroRapid",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "retrorapid", targets: ["retrorapid"]),
    ],
    targets: [
        // MARK: - C libraries (module map + shim + pkg-config)
        .systemLibrary(
            name: "CLibWebSockets",
            pkgConfig: "libwebsockets",
            providers: [.apt(["libwebsockets-dev"])]
        ),
        // libev, the event loop libwebsockets runs on (its evlib-ev plugin); no pkg-config file.
        .systemLibrary(
            name: "CLibEV",
            providers: [.apt(["libev-dev"])]
        ),
        .systemLibrary(
            name: "CSQLite3",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // PostgreSQL's client library, for many nodes on one database server.
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]
        ),

        // MARK: - Game (pure, no I/O)
        // The rules: road, generator, steps, moves, speed, grace, events, replay.
        .target(name: "RetroRapidRules"),
        // Built-in players (perfect, cues-only, random) and the simulation runner.
        .target(name: "RetroRapidBots", dependencies: ["RetroRapidRules"]),

        // MARK: - Server side
        // Logger and configuration shared by every server-side target.
        .target(name: "RetroRapidSupport"),
        // The domain: players, devices, codes, orders, games, settings, their errors, and the
        // storage interface (the repositories as protocols). Imports only the rules, so a
        // backend, the server and the CLI can all name a player without naming a database.
        .target(name: "RetroRapidDomain", dependencies: ["RetroRapidRules"]),
        // One SQL layer for both backends: the executor interface (statements with `$n` binds,
        // rows read by column name, the dialect), the repositories written once over it, and
        // group commit's savepoint loop. Imports only the domain, so both backends can use it
        // without naming each other.
        .target(name: "RetroRapidSQL", dependencies: ["RetroRapidDomain", "RetroRapidRules"]),
        // The SQLite backend: connection, statements, migrations, the repositories over them.
        // The only importer of CSQLite3.
        .target(name: "RetroRapidSQLite", dependencies: ["CSQLite3", "RetroRapidSQL", "RetroRapidDomain", "RetroRapidRules"]),
        // The PostgreSQL backend: connection, migrations, the repositories over a server shared
        // by many nodes, and the LISTEN/NOTIFY bus between them. The only importer of CLibPQ.
        .target(name: "RetroRapidPostgreSQL", dependencies: ["CLibPQ", "RetroRapidSQL", "RetroRapidDomain", "RetroRapidRules"]),
        // Opens storage from the configuration (StorageFactory): the one place that picks a
        // backend. A new backend is a target beside RetroRapidSQLite, chosen here.
        .target(name: "RetroRapidStorage", dependencies: ["RetroRapidDomain", "RetroRapidSQL", "RetroRapidSQLite", "RetroRapidPostgreSQL", "RetroRapidSupport", "RetroRapidRules"]),
        // libwebsockets in one place, the only importer of CLibWebSockets and CLibEV: the context
        // and its C memory, the service thread, the callback trampolines, the connection
        // handle, the one-timer tick scheduler, the monotonic clock, libwebsockets' log lines.
        // Shared by the server and the load generator (scripts/check-imports.sh checks it).
        .target(name: "RetroRapidLWS", dependencies: ["CLibWebSockets", "CLibEV", "RetroRapidSupport"]),
        // HTTP routes, WebSocket sessions, on RetroRapidLWS.
        .target(name: "RetroRapidServer", dependencies: ["RetroRapidLWS", "RetroRapidSupport", "RetroRapidRules", "RetroRapidDomain", "RetroRapidStorage"]),
        // The load generator: many libwebsockets client connections playing like people.
        .target(name: "RetroRapidLoad", dependencies: ["RetroRapidLWS", "RetroRapidSupport", "RetroRapidRules"]),
        // The thin executable: parses a command and hands it to the targets above.
        .executableTarget(
            name: "retrorapid",
            dependencies: ["RetroRapidRules", "RetroRapidBots", "RetroRapidSupport", "RetroRapidDomain", "RetroRapidStorage", "RetroRapidServer",
                           "RetroRapidLoad"]
        ),

        // MARK: - Fuzzing (docs/FUZZING.md)
        // What each fuzz target feeds its input to and which properties it checks beyond "does
        // not crash"; the corpus tests replay the seed corpus through it in every test run.
        .target(name: "RetroRapidFuzz", dependencies: ["CLibFuzzer", "RetroRapidRules", "RetroRapidDomain", "RetroRapidServer"]),
        // libFuzzer's driver, declared only: `-sanitize=fuzzer` links it (fuzz builds only).
        .systemLibrary(name: "CLibFuzzer"),

        // MARK: - Tests (mirror the targets)
        .testTarget(name: "RetroRapidRulesTests", dependencies: ["RetroRapidRules"]),
        .testTarget(name: "RetroRapidBotsTests", dependencies: ["RetroRapidBots", "RetroRapidRules"]),
        .testTarget(name: "RetroRapidSupportTests", dependencies: ["RetroRapidSupport"]),
        .testTarget(name: "RetroRapidDomainTests", dependencies: ["RetroRapidDomain", "RetroRapidStorageFixtures"]),
        // The storage contract: every repository test written against the interface, run
        // once per backend listed in Tests/RetroRapidStorageTests/StorageBackends.swift.
        .testTarget(name: "RetroRapidStorageTests", dependencies: ["RetroRapidSQL", "RetroRapidStorage", "RetroRapidSQLite", "RetroRapidPostgreSQL", "RetroRapidDomain", "RetroRapidRules", "RetroRapidStorageFixtures"]),
        // SQLite's own: the connection, statements, migrator, backup, durability, the schema,
        // the repositories' SQL, and the operator CLI on a real database file.
        .testTarget(name: "RetroRapidSQLiteTests", dependencies: ["RetroRapidSQL", "RetroRapidSQLite", "RetroRapidDomain", "RetroRapidRules", "RetroRapidStorageFixtures"]),
        // PostgreSQL's own: the connection, the migrator, the bus, against a real server the
        // tests are given (RETRORAPID_TEST_POSTGRES_URL, from scripts/with-test-postgres.sh).
        .testTarget(name: "RetroRapidPostgreSQLTests", dependencies: ["RetroRapidSQL", "RetroRapidPostgreSQL", "RetroRapidDomain", "RetroRapidStorageFixtures"]),
        // Fixtures the storage test targets share (folders, dates, games, a fresh PostgreSQL
        // database on the test server).
        .target(name: "RetroRapidStorageFixtures", dependencies: ["RetroRapidDomain", "RetroRapidRules", "RetroRapidPostgreSQL"], path: "Tests/RetroRapidStorageFixtures"),
        // The server's tests also run the load generator against a real server, and bots play the
        // games whose replays they check.
        .testTarget(name: "RetroRapidServerTests", dependencies: ["RetroRapidServer", "RetroRapidLWS", "RetroRapidLoad", "RetroRapidBots", "RetroRapidDomain", "RetroRapidStorage", "RetroRapidSQLite", "RetroRapidSQL", "RetroRapidRules", "RetroRapidSupport"]),
        .testTarget(name: "RetroRapidLoadTests", dependencies: ["RetroRapidLoad", "RetroRapidSupport"]),
        .testTarget(name: "RetroRapidFuzzTests", dependencies: ["RetroRapidFuzz"]),
    ]
)

// One small executable per fuzz target, `fuzz-<name>` from Sources/Fuzz/<name>. Built with
// `-Xswiftc -DFUZZING -Xswiftc -sanitize=fuzzer,address` (scripts/fuzz.sh) its main runs
// libFuzzer's driver on the target; built normally (plain `swift build`) it is a replay tool
// that runs files or folders of inputs through the same checks, so the ordinary build needs
// no fuzzer runtime. They live in this package, not in a package of their own, so
// they reach the reader's `package` API without making it public and stay built and
// type-checked by every `swift build`.
let fuzzTargets = ["client-message", "settings", "promo-code", "input-log", "display-name", "http-query", "fragment-assembly",
                   "move-message", "checkpoint-slice"]
package.targets += fuzzTargets.map { name in
    .executableTarget(name: "fuzz-\(name)", dependencies: ["RetroRapidFuzz"], path: "Sources/Fuzz/\(name)")
}
