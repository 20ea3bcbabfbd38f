import Foundation
import RetroRapidRules
import RetroRapidDomain
import RetroRapidSQLite
import RetroRapidSQL
import Testing
@testable import RetroRapidServer

@Suite("Leaderboards over HTTP")
struct LeaderboardAPITests {
    /// Records a finished game as the game side would, on another connection to the file.
    static func record(_ server: RunningGameServer, publicID: String, score: Int, level: SpeedLevel = .fast) throws {
        let steps = score + 6
        let now = Date()
        try SQLGameRepository(executor: SQLiteExecutor(database: server.database())).record(NewGame(
            playerID: try server.playerRowID(publicID: publicID), level: level, seed: 1,
            inputLog: InputLog(steps: steps, moves: []), score: score, steps: steps, endReason: .crash,
            startedAt: now.addingTimeInterval(-30), endedAt: now, durationMilliseconds: 30_000))
    }

    @Test func theTopPagesWithACursorAndAroundMeGivesTheRank() throws {
        let server = try RunningGameServer()
        var players: [(token: String, id: String)] = []
        for (index, score) in [50, 40, 30, 20, 10].enumerated() {
            let player = try server.createPlayer("Racer \(index)")
            try Self.record(server, publicID: player.id, score: score)
            players.append(player)
        }

        let first = try server.request("GET", "/api/v1/leaderboards/fast/today?limit=2")
        #expect(first.status == 200)
        #expect(first.json?["total"] as? Int == 5)
        #expect((first.json?["resetsAt"] as? String)?.hasSuffix("T00:00:00Z") == true)
        let firstEntries = try #require(first.json?["entries"] as? [[String: Any]])
        #expect(firstEntries.map { $0["score"] as? Int } == [50, 40])
        #expect(firstEntries.map { $0["rank"] as? Int } == [1, 2])
        let cursor = try #require(first.json?["nextCursor"] as? String)

        let escaped = cursor.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? cursor
        let second = try server.request("GET", "/api/v1/leaderboards/fast/today?limit=2&cursor=\(escaped)")
        #expect(second.status == 200, "\(second.text)")
        let secondEntries = try #require(second.json?["entries"] as? [[String: Any]])
        #expect(secondEntries.map { $0["score"] as? Int } == [30, 20])
        #expect(secondEntries.map { $0["rank"] as? Int } == [3, 4])

        let around = try server.request("GET", "/api/v1/leaderboards/fast/allTime/around-me?neighbours=1", token: players[3].token)
        #expect(around.status == 200)
        let me = try #require(around.json?["me"] as? [String: Any])
        #expect(me["rank"] as? Int == 4)
        #expect(me["playerId"] as? String == players[3].id)
        #expect((around.json?["entries"] as? [[String: Any]])?.map { $0["score"] as? Int } == [30, 20, 10])
        #expect(around.json?["resetsAt"] == nil)

        // Another level's board is empty.
        let rapid = try server.request("GET", "/api/v1/leaderboards/rapid/thisWeek")
        #expect(rapid.json?["total"] as? Int == 0)
        #expect(rapid.json?["nextCursor"] == nil)
    }

    @Test func aroundMeWithoutAScoreSaysSo() throws {
        let server = try RunningGameServer()
        let ada = try server.createPlayer("Ada")
        let response = try server.request("GET", "/api/v1/leaderboards/cruise/today/around-me", token: ada.token)
        #expect(response.status == 200)
        #expect(response.json?["me"] == nil)
        #expect((response.json?["entries"] as? [Any])?.isEmpty == true)
        #expect(try server.request("GET", "/api/v1/leaderboards/cruise/today/around-me").status == 401)
    }
}
