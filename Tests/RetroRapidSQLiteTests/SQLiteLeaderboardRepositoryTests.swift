import Foundation
import RetroRapidRules
@testable import RetroRapidDomain
@testable import RetroRapidSQLite
import RetroRapidStorageFixtures
import Testing

/// Leaderboards per level for today, this ISO week and all time (docs/API.md), filled through
/// `GameRepository.record` on real database files migrated with the product's `Migrations/`.
@Suite struct SQLiteLeaderboardRepositoryTests {
    // MARK: Periods

    @Test func periodsSeparateAcrossAUTCMidnightThatIsAlsoAMonday() throws {
        try withMigratedDatabase(named: "boards.sqlite") { db in
            let ann = try LeaderboardFixture.addPlayer(db, "ann")
            let games = SQLiteGameRepository(database: db)
            let boards = SQLiteLeaderboardRepository(database: db)
            let sunday = utc("2026-01-18T23:59:30Z")
            let monday = utc("2026-01-19T00:00:10Z")
            try games.record(scoredGame(player: ann, score: 10, endedAt: sunday))
            // Started on Sunday, ended on Monday: it counts for Monday.
            let late = try games.record(scoredGame(player: ann, score: 5, endedAt: monday, playedSeconds: 90))
            #expect(late.standings.map(\.periodKey) == ["2026-01-19", "2026-W04", "all"])
            #expect(late.standings.map(\.isNewBest) == [true, true, false])
            #expect(late.standings.map(\.personalBest) == [5, 5, 10])

            func scores(_ period: LeaderboardPeriod, _ now: Date) throws -> (String, [Int]) {
                let page = try boards.top(level: .fast, period: period, now: now)
                return (page.periodKey, page.entries.map(\.score))
            }
            #expect(try scores(.today, sunday) == ("2026-01-18", [10]))
            #expect(try scores(.today, monday) == ("2026-01-19", [5]))
            #expect(try scores(.thisWeek, sunday) == ("2026-W03", [10]))
            #expect(try scores(.thisWeek, monday) == ("2026-W04", [5]))
            #expect(try scores(.allTime, sunday) == ("all", [10]))
            #expect(try scores(.allTime, monday) == ("all", [10]))
            // Tuesday: a new day, still the same week.
            let tuesday = utc("2026-01-20T08:00:00Z")
            #expect(try scores(.today, tuesday) == ("2026-01-20", []))
            #expect(try scores(.thisWeek, tuesday) == ("2026-W04", [5]))
            // Other levels are other boards.
            #expect(try boards.top(level: .rapid, period: .allTime, now: monday).entries.isEmpty)
        }
    }

    @Test func periodKeysMatchFoundationsISOCalendar() {
        var calendar = Calendar(identifier: .iso8601)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        var random = SystemRandomNumberGenerator()
        // Known edges: ISO week-years differ from calendar years around New Year.
        let edges = ["2027-01-01T00:00:00Z": "2026-W53", "2026-01-01T00:00:00Z": "2026-W01",
                     "2024-12-30T00:00:00Z": "2025-W01", "2021-01-03T23:59:59Z": "2020-W53"]
        for (text, key) in edges {
            #expect(LeaderboardPeriod.thisWeek.key(containing: utc(text)) == key)
        }
        for _ in 0..<5000 {
            let date = Date(timeIntervalSince1970: Double(Int64.random(in: 0...4_102_444_800, using: &random)))
            let parts = calendar.dateComponents([.year, .month, .day, .yearForWeekOfYear, .weekOfYear, .weekday], from: date)
            let week = String(format: "%04d-W%02d", parts.yearForWeekOfYear!, parts.weekOfYear!)
            let day = String(format: "%04d-%02d-%02d", parts.year!, parts.month!, parts.day!)
            #expect(LeaderboardPeriod.thisWeek.key(containing: date) == week)
            #expect(LeaderboardPeriod.today.key(containing: date) == day)
            let weekStart = calendar.dateInterval(of: .weekOfYear, for: date)!
            #expect(LeaderboardPeriod.thisWeek.start(containing: date) == weekStart.start)
            #expect(LeaderboardPeriod.thisWeek.resetsAt(now: date) == weekStart.end)
            #expect(LeaderboardPeriod.today.resetsAt(now: date) == calendar.dateInterval(of: .day, for: date)!.end)
        }
    }

    // MARK: Order

    @Test func tiesGoToTheEarlierAchievementThenTheLowerPlayerID() throws {
        try withMigratedDatabase(named: "boards.sqlite") { db in
            // Ids in order of creation: ann 1, bob 2, cat 3, dan 4.
            let ids = try ["ann", "bob", "cat", "dan"].map { try LeaderboardFixture.addPlayer(db, $0) }
            let games = SQLiteGameRepository(database: db)
            let noon = utc("2026-01-15T12:00:00Z")
            try games.record(scoredGame(player: ids[0], score: 40, endedAt: noon.addingTimeInterval(5)))
            try games.record(scoredGame(player: ids[3], score: 40, endedAt: noon))  // earlier: ahead of ann
            try games.record(scoredGame(player: ids[2], score: 40, endedAt: noon.addingTimeInterval(5.7)))  // same second as ann
            try games.record(scoredGame(player: ids[1], score: 41, endedAt: noon.addingTimeInterval(60)))
            let page = try SQLiteLeaderboardRepository(database: db).top(level: .fast, period: .today, now: noon)
            #expect(page.entries.map(\.playerPublicID) == ["bob", "dan", "ann", "cat"])
            #expect(page.entries.map(\.rank) == [1, 2, 3, 4])
            #expect(page.entries[1].achievedAt == noon)
            #expect(page.entries[0].displayName == "Racer bob")
            for entry in page.entries {
                let mine = try SQLiteLeaderboardRepository(database: db).aroundMe(
                    playerID: ids[["ann", "bob", "cat", "dan"].firstIndex(of: entry.playerPublicID)!],
                    level: .fast, period: .today, neighbours: 0, now: noon)
                #expect(mine?.me == entry)
            }
        }
    }

    // MARK: Paging

    @Test func keysetPagesReturnEveryEntryOnceWhileScoresArrive() throws {
        try withMigratedDatabase(named: "boards.sqlite") { db in
            let games = SQLiteGameRepository(database: db)
            let boards = SQLiteLeaderboardRepository(database: db)
            let noon = utc("2026-01-15T12:00:00Z")
            var players: [String: Int64] = [:]
            // 23 players; several share a score so that pages split ties.
            for index in 0..<23 {
                let name = "p\(index)"
                players[name] = try LeaderboardFixture.addPlayer(db, name)
                try games.record(scoredGame(player: players[name]!, score: 100 - index / 3, endedAt: noon.addingTimeInterval(Double(index % 3))))
            }
            let original = Set(players.keys)
            var seen: [String] = []
            var page = try boards.top(level: .fast, period: .allTime, limit: 5, now: noon)
            #expect(page.entries.map(\.rank) == Array(1...5))
            seen += page.entries.map(\.playerPublicID)

            // Between pages: a new leader (OFFSET paging would now repeat an entry), and a
            // newcomer far below the cursor (reached later, once).
            let leader = try LeaderboardFixture.addPlayer(db, "leader")
            try games.record(scoredGame(player: leader, score: 500, endedAt: noon))
            let newcomer = try LeaderboardFixture.addPlayer(db, "newcomer")
            try games.record(scoredGame(player: newcomer, score: 1, endedAt: noon))

            var pages = 1
            while let cursor = page.nextCursor {
                page = try boards.top(level: .fast, period: .allTime, limit: 5, after: cursor, now: noon)
                pages += 1
                #expect(page.entries.count <= 5)
                // Ranks are counted afresh: the new leader pushed everyone below it down one.
                if let first = page.entries.first {
                    #expect(page.entries.map(\.rank) == Array(first.rank..<(first.rank + page.entries.count)))
                }
                seen += page.entries.map(\.playerPublicID)
            }
            #expect(Set(seen).count == seen.count, "an entry came twice: \(seen)")
            #expect(original.isSubset(of: Set(seen)))
            #expect(seen.contains("newcomer"))
            #expect(!seen.contains("leader"))
            #expect(seen.count == 24)
            #expect(pages == 5)
            #expect(page.entries.last?.playerPublicID == "newcomer")
            #expect(page.entries.last?.rank == 25)
        }
    }

    @Test func aFullLastPageHasNoCursorAndPagesStayOnTheirDay() throws {
        try withMigratedDatabase(named: "boards.sqlite") { db in
            let games = SQLiteGameRepository(database: db)
            let boards = SQLiteLeaderboardRepository(database: db)
            let evening = utc("2026-01-15T23:59:50Z")
            for index in 0..<4 {
                let player = try LeaderboardFixture.addPlayer(db, "p\(index)")
                try games.record(scoredGame(player: player, score: 10 + index, endedAt: evening))
            }
            let first = try boards.top(level: .fast, period: .today, limit: 2, now: evening)
            let cursor = try #require(first.nextCursor)
            // Midnight passes; the cursor keeps the reader on the day they were reading.
            let midnight = utc("2026-01-16T00:00:05Z")
            let second = try boards.top(level: .fast, period: .today, limit: 2, after: cursor, now: midnight)
            #expect(second.periodKey == "2026-01-15")
            #expect(second.entries.map(\.score) == [11, 10])
            #expect(second.entries.map(\.rank) == [3, 4])
            #expect(second.nextCursor == nil)
            // Without a cursor, the new day's board, empty so far.
            #expect(try boards.top(level: .fast, period: .today, now: midnight).entries.isEmpty)
        }
    }

    @Test func badPagingRequestsAreRefused() throws {
        try withMigratedDatabase(named: "boards.sqlite") { db in
            let games = SQLiteGameRepository(database: db)
            let boards = SQLiteLeaderboardRepository(database: db)
            let noon = utc("2026-01-15T12:00:00Z")
            for index in 0..<3 {
                let player = try LeaderboardFixture.addPlayer(db, "p\(index)")
                try games.record(scoredGame(player: player, score: index, endedAt: noon))
            }
            let cursor = try #require(try boards.top(level: .fast, period: .allTime, limit: 1, now: noon).nextCursor)
            let cases: [(() throws -> LeaderboardPage, String)] = [
                ({ try boards.top(level: .fast, period: .allTime, limit: 0, now: noon) }, "limit"),
                ({ try boards.top(level: .fast, period: .allTime, limit: 101, now: noon) }, "limit"),
                ({ try boards.top(level: .fast, period: .allTime, after: LeaderboardCursor(rawValue: "bm9wZQ"), now: noon) }, "cursor"),
                ({ try boards.top(level: .fast, period: .allTime, after: LeaderboardCursor(rawValue: "%%%"), now: noon) }, "cursor"),
                ({ try boards.top(level: .rapid, period: .allTime, after: cursor, now: noon) }, "cursor"),
                ({ try boards.top(level: .fast, period: .today, after: cursor, now: noon) }, "cursor"),
            ]
            for (request, field) in cases {
                let error = #expect(throws: StoreError.self) { try request() }
                #expect(error?.code == .invalid)
                #expect(error?.field == field)
            }
            #expect(try boards.top(level: .fast, period: .allTime, after: cursor, now: noon).entries.count == 2)
        }
    }

    // MARK: Around me

    @Test func aroundMeAtTheTopTheMiddleAndTheBottom() throws {
        try withMigratedDatabase(named: "boards.sqlite") { db in
            let games = SQLiteGameRepository(database: db)
            let boards = SQLiteLeaderboardRepository(database: db)
            let noon = utc("2026-01-15T12:00:00Z")
            var ids: [Int64] = []
            // p0 scores 110 (rank 1) … p10 scores 10 (rank 11).
            for index in 0...10 {
                ids.append(try LeaderboardFixture.addPlayer(db, "p\(index)"))
                try games.record(scoredGame(player: ids[index], score: 110 - 10 * index, endedAt: noon))
            }
            func around(_ index: Int, _ neighbours: Int = 2) throws -> [String] {
                let result = try #require(try boards.aroundMe(playerID: ids[index], level: .fast, period: .thisWeek, neighbours: neighbours, now: noon))
                #expect(result.me.playerPublicID == "p\(index)")
                #expect(result.me.rank == index + 1)
                #expect(result.periodKey == "2026-W03")
                return result.entries.map { "\($0.rank):\($0.playerPublicID):\($0.score)" }
            }
            #expect(try around(0) == ["1:p0:110", "2:p1:100", "3:p2:90"])
            #expect(try around(5) == ["4:p3:80", "5:p4:70", "6:p5:60", "7:p6:50", "8:p7:40"])
            #expect(try around(10) == ["9:p8:30", "10:p9:20", "11:p10:10"])
            #expect(try around(1) == ["1:p0:110", "2:p1:100", "3:p2:90", "4:p3:80"])
            #expect(try around(5, 0) == ["6:p5:60"])
            #expect(try around(5, 50).count == 11)

            // "Show more" below the neighbourhood continues where it ended.
            let middle = try #require(try boards.aroundMe(playerID: ids[5], level: .fast, period: .thisWeek, neighbours: 2, now: noon))
            let cursor: LeaderboardCursor = try #require(middle.nextCursor)
            let more = try boards.top(level: .fast, period: .thisWeek, limit: 2, after: cursor, now: noon)
            #expect(more.entries.map { "\($0.rank):\($0.playerPublicID)" } == ["9:p8", "10:p9"])
            let bottom = try #require(try boards.aroundMe(playerID: ids[10], level: .fast, period: .thisWeek, neighbours: 2, now: noon))
            #expect(bottom.nextCursor == nil)
            let nearBottom = try #require(try boards.aroundMe(playerID: ids[8], level: .fast, period: .thisWeek, neighbours: 2, now: noon))
            #expect(nearBottom.nextCursor == nil)
            #expect(try boards.aroundMe(playerID: ids[8], level: .fast, period: .thisWeek, neighbours: 1, now: noon)?.nextCursor != nil)
        }
    }

    @Test func aroundMeWithoutAScoreIsNilAndAnUnknownPlayerIsNotFound() throws {
        try withMigratedDatabase(named: "boards.sqlite") { db in
            let ann = try LeaderboardFixture.addPlayer(db, "ann")
            let boards = SQLiteLeaderboardRepository(database: db)
            let noon = utc("2026-01-15T12:00:00Z")
            #expect(try boards.aroundMe(playerID: ann, level: .fast, period: .today, now: noon) == nil)
            let unknown = #expect(throws: StoreError.self) {
                try boards.aroundMe(playerID: ann + 1, level: .fast, period: .today, now: noon)
            }
            #expect(unknown?.code == .notFound)
            let bad = #expect(throws: StoreError.self) {
                try boards.aroundMe(playerID: ann, level: .fast, period: .today, neighbours: 51, now: noon)
            }
            #expect(bad?.field == "neighbours")
        }
    }

    /// Ranks and pages must come from the indexes built for them (a seek and a short walk, a
    /// sum over one board's score counts, a count over one score's entries), never a scan and
    /// sort. Asks SQLite for the plans of the repository's own queries.
    @Test(arguments: [
        SQLiteLeaderboardRepository.rankSQL, SQLiteLeaderboardRepository.totalSQL, SQLiteLeaderboardRepository.firstPageSQL,
        SQLiteLeaderboardRepository.pageAfterSQL, SQLiteLeaderboardRepository.pageBeforeSQL,
    ])
    func rankingQueriesUseTheirIndexes(sql: String) throws {
        try withMigratedDatabase(named: "boards.sqlite") { db in
            let details = try db.prepare("EXPLAIN QUERY PLAN " + sql).query { $0.string(at: 3) }
            let tables = details.filter { $0.contains("best_scores") || $0.contains("score_counts") || $0.hasPrefix("SEARCH b ") }
            #expect(!tables.isEmpty)
            for detail in tables {
                let board = "(level=? AND period=? AND period_key=?"
                let ok = detail.hasPrefix("SEARCH") && detail.contains(board)
                    && (detail.contains("COVERING INDEX best_scores_ranking") || detail.contains("COVERING INDEX score_counts_covering"))
                #expect(ok, "\(details)")
            }
            #expect(!details.contains { $0.contains("TEMP B-TREE") }, "sorts instead of walking an index: \(details)")
        }
    }

    /// Ranks from the score counts agree with ranks from sorting every entry, through new
    /// bests, scores that replace others, and a player deleted with all their scores.
    @Test func ranksMatchASortOfTheBoardThroughReplacementsAndDeletions() throws {
        try withMigratedDatabase(named: "boards.sqlite") { db in
            let games = SQLiteGameRepository(database: db)
            let boards = SQLiteLeaderboardRepository(database: db)
            var random = SystemRandomNumberGenerator()
            let start = utc("2026-01-17T20:00:00Z")  // a Saturday evening
            var ids: [Int64] = []
            for index in 0..<40 { ids.append(try LeaderboardFixture.addPlayer(db, "p\(index)")) }
            for index in 0..<400 {
                // Across midnight and into the next week, with many equal scores and seconds.
                let ended = start.addingTimeInterval(Double(index * 700 + Int.random(in: 0..<3, using: &random)))
                try games.record(scoredGame(
                    player: ids.randomElement(using: &random)!, level: [.cruise, .fast].randomElement(using: &random)!,
                    score: Int.random(in: 0...25, using: &random), endedAt: ended))
            }
            try db.prepare("DELETE FROM players WHERE id = ?").execute([ids.removeLast()])

            let stale = try db.column("""
                SELECT count(*) FROM (
                    SELECT level, period, period_key, score, count(*) AS players FROM best_scores
                    GROUP BY level, period, period_key, score
                    EXCEPT SELECT level, period, period_key, score, players FROM score_counts
                    UNION ALL
                    SELECT level, period, period_key, score, players FROM score_counts
                    EXCEPT SELECT level, period, period_key, score, count(*) FROM best_scores
                    GROUP BY level, period, period_key, score)
                """)
            #expect(stale == [.integer(0)])

            let boardsInUse = try db.prepare("SELECT DISTINCT level, period, period_key FROM best_scores")
                .query { ($0.string(at: 0), $0.string(at: 1), $0.string(at: 2)) }
            #expect(boardsInUse.count > 6)
            for (level, period, key) in boardsInUse {
                let sorted = try db.prepare("""
                    SELECT player_id FROM best_scores WHERE level = ? AND period = ? AND period_key = ?
                    ORDER BY score DESC, achieved_at, player_id
                    """).query([level, period, key]) { $0.int64(at: 0) }
                let now = try #require(try db.prepare("SELECT max(achieved_at) FROM best_scores WHERE level = ? AND period = ? AND period_key = ?")
                    .query([level, period, key]) { utc($0.string(at: 0)) }.first)
                let periodName = try #require(LeaderboardPeriod.allCases.first { $0.storageName == period })
                for (position, player) in sorted.enumerated() {
                    let mine = try boards.aroundMe(playerID: player, level: SpeedLevel(rawValue: level)!, period: periodName, neighbours: 1, now: now)
                    #expect(mine?.me.rank == position + 1)
                    #expect(mine?.total == sorted.count)
                }
            }
        }
    }
}

/// Helpers for this file.
fileprivate enum LeaderboardFixture {
    /// A bare player named "Racer <publicID>", so a board shows whose row is whose.
    static func addPlayer(_ db: Database, _ publicID: String) throws -> Int64 {
        try insertPlayer(db, publicID, name: "Racer \(publicID)")
    }
}
