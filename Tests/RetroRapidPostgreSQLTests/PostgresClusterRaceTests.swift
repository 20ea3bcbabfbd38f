import Foundation
import RetroRapidDomain
import RetroRapidPostgreSQL
import RetroRapidSQL
import RetroRapidStorageFixtures
import Testing

/// `SQLClusterRepository`'s rules on PostgreSQL under real concurrency: many connections (one per
/// thread, as many nodes would have) racing for one game, one player's games, one node id.
@Suite(.enabled(if: TestPostgres.isAvailable, "needs RETRORAPID_TEST_POSTGRES_URL (scripts/with-test-postgres.sh)"))
struct PostgresClusterRaceTests {
    let now = utc("2026-01-15T10:00:00Z")
    let racers = 24

    /// A migrated database with one player and `games` running games of theirs (no play taken).
    private func prepared(_ url: String, games: [String]) throws -> Int64 {
        let connection = try PostgresConnection(conninfo: url)
        try PostgresStorage(connection: connection, migrations: productMigrations.appendingPathComponent("postgresql"), location: url).migrate()
        let player = try connection.execute("""
            INSERT INTO players (public_id, display_name, created_at) VALUES ('p-1', 'Racer', '2026-01-01T00:00:00Z') RETURNING id
            """).first!.int64(at: 0)
        for game in games {
            _ = try connection.execute("""
                INSERT INTO running_games (public_id, player_id, level, seed, rules_version, practice, free_play, started_at)
                VALUES ($1, $2, 'fast', 7, 1, true, false, '2026-01-15T10:00:00Z')
                """, [game, player])
        }
        return player
    }

    /// Runs `body(i)` on `racers` threads at once, each with its own connection (connected
    /// before the start line, so the race is the claims, not the connects); their answers.
    private func race<T: Sendable>(_ url: String, _ body: @escaping @Sendable (Int, SQLClusterRepository) throws -> T) throws -> [T] {
        try raceOnThreads(racers, open: { SQLClusterRepository(executor: try PostgresConnection(conninfo: url)) }, body)
            .map { try $0.get() }
    }

    @Test func manyNodesClaimingOneGameLeaveExactlyOneHolder() throws {
        try TestPostgres.withDatabase { url in
            _ = try prepared(url, games: ["00000000000000aa"])
            let setup = SQLClusterRepository(executor: try PostgresConnection(conninfo: url))
            for index in 0..<racers { try setup.join(nodeID: "n\(index)", instance: "i\(index)", now: now, lease: ClusterLease.standard.lease) }
            let claims = try race(url) { index, cluster in
                try cluster.claim(gameID: "00000000000000aa", nodeID: "n\(index)", now: now, lease: ClusterLease.standard.lease)
            }
            let winners = claims.indices.filter { claims[$0] == .claimed }
            #expect(winners.count == 1)
            let holder = try #require(try setup.holder(gameID: "00000000000000aa", now: now, lease: ClusterLease.standard.lease))
            #expect(holder.nodeID == "n\(winners.first ?? -1)")
            #expect(claims.allSatisfy { if case .held(let seen) = $0 { seen.nodeID == holder.nodeID } else { $0 == .claimed } })
        }
    }

    @Test func manyGamesOfOnePlayerClaimedAtOnceLeaveExactlyOneHeld() throws {
        try TestPostgres.withDatabase { url in
            let games = (0..<racers).map { String(format: "%016x", $0 + 1) }
            _ = try prepared(url, games: games)
            let claims = try race(url) { index, cluster in
                try cluster.claim(gameID: games[index], nodeID: "n\(index)", now: now, lease: ClusterLease.standard.lease)
            }
            let winners = claims.indices.filter { claims[$0] == .claimed }
            #expect(winners.count == 1)
            let winner = games[winners.first ?? 0]
            #expect(claims.filter { $0 == .playerHasAnotherGame(gameID: winner) }.count == racers - 1)
            let rows = try PostgresConnection(conninfo: url).execute("SELECT game_id FROM game_holders").map { $0.string(at: 0) }
            #expect(rows == [winner])
        }
    }

    @Test func manyProcessesJoiningWithOneNodeIDLeaveExactlyOne() throws {
        try TestPostgres.withDatabase { url in
            _ = try prepared(url, games: [])
            let joins = try race(url) { index, cluster -> Bool in
                do {
                    try cluster.join(nodeID: "a", instance: "i\(index)", now: now, lease: ClusterLease.standard.lease)
                    return true
                } catch is ClusterNodeInUseError {
                    return false
                }
            }
            #expect(joins.filter { $0 }.count == 1)
            let instance = try PostgresConnection(conninfo: url).execute("SELECT instance FROM cluster_nodes").map { $0.string(at: 0) }
            #expect(instance == ["i\(joins.firstIndex(of: true) ?? -1)"])
        }
    }
}
