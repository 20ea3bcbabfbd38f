import Foundation
import RetroRapidRules
import RetroRapidDomain
import RetroRapidSQL
import RetroRapidSQLite
import Testing
@testable import RetroRapidServer

/// The daily board, the daily road, a player's games, a game's summary and a race's results
/// over HTTP (docs/API.md), on a real server and its SQLite file. Games are stored as the game
/// side stores them, through the repositories on another connection to the file.
@Suite("Daily roads, games and races over HTTP")
struct PlayTogetherAPITests {
    let now = Date()
    var today: UTCDay { UTCDay(containing: now) }

    /// A finished daily game of `player` (its attempt taken first, as a start does).
    @discardableResult
    func playDaily(_ server: RunningGameServer, _ player: String, id: String, score: Int, practice: Bool = false) throws -> NewGame {
        let database = try server.database()
        let seed = try SQLDailyRoadRepository(executor: SQLiteExecutor(database: database)).seed(level: .fast, day: today, now: now)
        let playerID = try server.playerRowID(publicID: player)
        let startedAt = max(today.start, now.addingTimeInterval(-30))
        try SQLRunningGameRepository(sqlite: SQLiteExecutor(database: database)).begin(RunningGameStart(
            publicID: id, playerID: playerID, level: .fast, seed: seed, practice: practice, startedAt: startedAt, road: .daily(today)))
        let steps = score + 6
        let game = NewGame(publicID: id, playerID: playerID, level: .fast, seed: seed, inputLog: InputLog(steps: steps, moves: []),
                           score: score, steps: steps, endReason: .crash, practice: practice, startedAt: startedAt, endedAt: now,
                           durationMilliseconds: 0, road: .daily(today))
        try SQLGameRepository(executor: SQLiteExecutor(database: database)).record(game)
        return game
    }

    @discardableResult
    func playRandom(_ server: RunningGameServer, _ player: String, id: String, score: Int) throws -> NewGame {
        let steps = score + 6
        let game = NewGame(publicID: id, playerID: try server.playerRowID(publicID: player), level: .fast, seed: 9,
                           inputLog: InputLog(steps: steps, moves: []), score: score, steps: steps, endReason: .abandoned,
                           startedAt: now.addingTimeInterval(-30), endedAt: now, durationMilliseconds: 30_000)
        try SQLGameRepository(executor: SQLiteExecutor(database: try server.database())).record(game)
        return game
    }

    @Test func theDailyBoardIsALeaderboardPeriodWithItsDay() throws {
        let server = try RunningGameServer()
        let ada = try server.createPlayer("Ada")
        let bo = try server.createPlayer("Bo")
        try playDaily(server, ada.id, id: "00000000000000a1", score: 20)
        try playDaily(server, bo.id, id: "00000000000000b1", score: 30)
        try playDaily(server, ada.id, id: "00000000000000a2", score: 90, practice: true)

        let page = try server.request("GET", "/api/v1/leaderboards/fast/daily?limit=1")
        #expect(page.status == 200, "\(page.text)")
        #expect(page.json?["period"] as? String == "daily" && page.json?["day"] as? String == today.text)
        #expect(page.json?["periodKey"] as? String == today.text && page.json?["total"] as? Int == 2)
        #expect(page.json?["resetsAt"] as? String == UTCCivilTime.text(today.end))
        let entries = try #require(page.json?["entries"] as? [[String: Any]])
        #expect(entries.map { $0["gameId"] as? String } == ["00000000000000b1"])
        let cursor = try #require(page.json?["nextCursor"] as? String)
        let next = try server.request("GET", "/api/v1/leaderboards/fast/daily?day=\(today.text)&cursor=\(cursor)")
        #expect((next.json?["entries"] as? [[String: Any]])?.map { $0["gameId"] as? String } == ["00000000000000a1"])
        // A daily cursor does not page another board.
        #expect(try server.request("GET", "/api/v1/leaderboards/fast/today?cursor=\(cursor)").status == 400)

        // The usual boards name the game holding each score too.
        let usual = try server.request("GET", "/api/v1/leaderboards/fast/allTime")
        #expect((usual.json?["entries"] as? [[String: Any]])?.map { $0["gameId"] as? String } == ["00000000000000b1", "00000000000000a1"])
        #expect(usual.json?["day"] == nil)

        let around = try server.request("GET", "/api/v1/leaderboards/fast/daily/around-me?neighbours=0", token: ada.token)
        #expect(around.status == 200)
        #expect((around.json?["me"] as? [String: Any])?["rank"] as? Int == 2 && around.json?["day"] as? String == today.text)
        let carl = try server.createPlayer("Carl")
        let nobody = try server.request("GET", "/api/v1/leaderboards/fast/daily/around-me", token: carl.token)
        #expect(nobody.json?["me"] == nil && nobody.json?["total"] as? Int == 2)

        // Yesterday's board is there (empty); tomorrow's and a malformed day are bad queries.
        let yesterday = UTCDay(containing: today.start.addingTimeInterval(-1)).text
        #expect(try server.request("GET", "/api/v1/leaderboards/fast/daily?day=\(yesterday)").json?["total"] as? Int == 0)
        let tomorrow = UTCDay(containing: today.end).text
        for bad in [tomorrow, "2026-13-01", "2026-1-01", "today", ""] {
            let response = try server.request("GET", "/api/v1/leaderboards/fast/daily?day=\(bad)")
            #expect(response.status == 400 && response.errorCode == "invalid", "\(bad): \(response.text)")
            #expect((response.json?["error"] as? [String: Any])?["field"] as? String == "day", "\(bad)")
            let mine = try server.request("GET", "/api/v1/leaderboards/fast/daily/around-me?day=\(bad)", token: ada.token)
            #expect(mine.status == 400, "\(bad)")
        }
        #expect(try server.request("GET", "/api/v1/leaderboards/fast/weekly").status == 404)
    }

    @Test func theDailyRoadSaysWhetherTodaysAttemptIsMade() throws {
        let server = try RunningGameServer()
        let ada = try server.createPlayer("Ada")
        let before = try server.request("GET", "/api/v1/daily/fast", token: ada.token)
        #expect(before.status == 200)
        #expect(before.text.contains(#""scoredAttempt":null"#))
        #expect(before.json?["day"] as? String == today.text && before.json?["level"] as? String == "fast")
        #expect(before.json?["resetsAt"] as? String == UTCCivilTime.text(today.end))
        try playDaily(server, ada.id, id: "00000000000000a1", score: 20)
        let after = try server.request("GET", "/api/v1/daily/fast", token: ada.token)
        let attempt = try #require(after.json?["scoredAttempt"] as? [String: Any])
        #expect(attempt["gameId"] as? String == "00000000000000a1" && attempt["score"] as? Int == 20 && attempt["rank"] as? Int == 1)
        #expect(try server.request("GET", "/api/v1/daily/rapid", token: ada.token).text.contains(#""scoredAttempt":null"#))
        #expect(try server.request("GET", "/api/v1/daily/fast").status == 401)
        #expect(try server.request("GET", "/api/v1/daily/warp", token: ada.token).status == 404)
    }

    @Test func myGamesComeNewestFirstWithTheirRoadAndRace() throws {
        let server = try RunningGameServer()
        let ada = try server.createPlayer("Ada")
        let bo = try server.createPlayer("Bo")
        try playRandom(server, ada.id, id: "00000000000000a1", score: 1)
        try playDaily(server, ada.id, id: "00000000000000a2", score: 2)
        try playRandom(server, ada.id, id: "00000000000000a3", score: 3)
        try playRandom(server, bo.id, id: "00000000000000b1", score: 4)
        let race = try SQLRaceRepository(executor: SQLiteExecutor(database: try server.database())).record(NewRace(
            roomCode: "K7QXM2", level: .fast, practice: false, seed: 9, startedAt: now.addingTimeInterval(-30), endedAt: now, entries: [
                .init(place: 1, seat: 1, playerID: try server.playerRowID(publicID: bo.id), gameID: "00000000000000b1", score: 4, endReason: .abandoned),
                .init(place: 2, seat: 0, playerID: try server.playerRowID(publicID: ada.id), gameID: "00000000000000a3", score: 3, endReason: .timeLimit),
            ]))

        let first = try server.request("GET", "/api/v1/me/games?limit=2", token: ada.token)
        #expect(first.status == 200, "\(first.text)")
        let games = try #require(first.json?["games"] as? [[String: Any]])
        #expect(games.map { $0["gameId"] as? String } == ["00000000000000a3", "00000000000000a2"])
        #expect(games[0]["race"] as? String == race.publicID && games[0]["road"] as? String == "random" && games[0]["day"] == nil)
        #expect(games[1]["road"] as? String == "daily" && games[1]["day"] as? String == today.text && games[1]["race"] == nil)
        #expect(games[0]["reason"] as? String == "abandoned" && games[0]["practice"] as? Bool == false && games[0]["steps"] as? Int == 9)
        #expect(first.json?["nextBefore"] as? String == "00000000000000a2")
        let rest = try server.request("GET", "/api/v1/me/games?limit=2&before=00000000000000a2", token: ada.token)
        #expect((rest.json?["games"] as? [[String: Any]])?.map { $0["gameId"] as? String } == ["00000000000000a1"])
        #expect(rest.json?["nextBefore"] == nil)

        for bad in ["limit=0", "limit=101", "limit=x", "before=00000000000000b1", "before=nope", "before="] {
            let response = try server.request("GET", "/api/v1/me/games?\(bad)", token: ada.token)
            #expect(response.status == 400 && response.errorCode == "invalid", "\(bad): \(response.text)")
        }
        #expect(try server.request("GET", "/api/v1/me/games").status == 401)
    }

    @Test func aGamesSummaryHidesTodaysDailyReplayFromOthers() throws {
        let server = try RunningGameServer()
        let ada = try server.createPlayer("Ada")
        let bo = try server.createPlayer("Bo")
        try playDaily(server, ada.id, id: "00000000000000a1", score: 20)
        try playRandom(server, ada.id, id: "00000000000000a2", score: 5)

        let daily = try server.request("GET", "/api/v1/games/00000000000000a1")
        #expect(daily.status == 200, "\(daily.text)")
        #expect((daily.json?["player"] as? [String: Any])?["name"] as? String == "Ada")
        #expect(daily.json?["score"] as? Int == 20 && daily.json?["level"] as? String == "fast" && daily.json?["reason"] as? String == "crash")
        #expect(daily.json?["road"] as? String == "daily" && daily.json?["day"] as? String == today.text)
        #expect(daily.json?["replayable"] as? Bool == false)
        #expect(try server.request("GET", "/api/v1/games/00000000000000a1", token: bo.token).json?["replayable"] as? Bool == false)
        #expect(try server.request("GET", "/api/v1/games/00000000000000a1", token: ada.token).json?["replayable"] as? Bool == true)
        #expect(try server.request("GET", "/api/v1/games/00000000000000a2").json?["replayable"] as? Bool == true)

        let missing = try server.request("GET", "/api/v1/games/ffffffffffffffff")
        #expect(missing.status == 404 && missing.errorCode == "game_not_found")
        #expect(try server.request("GET", "/api/v1/games/00000000000000a1", token: "not-a-token").status == 401)
    }

    @Test func aRacesResultsAreReadByItsID() throws {
        let server = try RunningGameServer()
        let ada = try server.createPlayer("Ada")
        let bo = try server.createPlayer("Bo")
        try playRandom(server, ada.id, id: "00000000000000a1", score: 5)
        try playRandom(server, bo.id, id: "00000000000000b1", score: 8)
        let race = try SQLRaceRepository(executor: SQLiteExecutor(database: try server.database())).record(NewRace(
            roomCode: "K7QXM2", level: .fast, practice: true, seed: 9, startedAt: now.addingTimeInterval(-30), endedAt: now, entries: [
                .init(place: 1, seat: 1, playerID: try server.playerRowID(publicID: bo.id), gameID: "00000000000000b1", score: 8, endReason: .crash),
                .init(place: 2, seat: 0, playerID: try server.playerRowID(publicID: ada.id), gameID: "00000000000000a1", score: 5, endReason: .timeLimit),
            ]))
        let response = try server.request("GET", "/api/v1/races/\(race.publicID)")
        #expect(response.status == 200, "\(response.text)")
        #expect(response.json?["raceId"] as? String == race.publicID && response.json?["code"] as? String == "K7QXM2")
        #expect(response.json?["level"] as? String == "fast" && response.json?["practice"] as? Bool == true)
        let results = try #require(response.json?["results"] as? [[String: Any]])
        #expect(results.map { $0["name"] as? String } == ["Bo", "Ada"])
        #expect(results.map { $0["reason"] as? String } == ["crash", "time_limit"])
        #expect(results.map { $0["place"] as? Int } == [1, 2] && results.map { $0["seat"] as? Int } == [1, 0])
        #expect(results.map { $0["gameId"] as? String } == ["00000000000000b1", "00000000000000a1"])
        let missing = try server.request("GET", "/api/v1/races/0000000000000000")
        #expect(missing.status == 404 && missing.errorCode == "race_not_found")
    }
}
