import Foundation
@testable import RetroRapidDomain
import RetroRapidStorageFixtures
import RetroRapidRules
import Testing

/// The contract of `LeaderboardRepository`, run against every backend in `StorageBackends.all`.
@Suite struct LeaderboardRepositoryContractTests {
    @Test(arguments: StorageBackends.all) func resetsAtIsTheNextUTCMidnightAndTheNextMonday(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let boards = store.repositories().leaderboards
            let wednesday = utc("2026-01-14T15:30:00Z")
            #expect(boards.resetsAt(period: .today, now: wednesday) == utc("2026-01-15T00:00:00Z"))
            #expect(boards.resetsAt(period: .thisWeek, now: wednesday) == utc("2026-01-19T00:00:00Z"))
            #expect(boards.resetsAt(period: .allTime, now: wednesday) == nil)
            // At the very moment of a reset, the next one is a whole period away.
            let mondayMidnight = utc("2026-01-19T00:00:00Z")
            #expect(boards.resetsAt(period: .today, now: mondayMidnight) == utc("2026-01-20T00:00:00Z"))
            #expect(boards.resetsAt(period: .thisWeek, now: mondayMidnight) == utc("2026-01-26T00:00:00Z"))
            let sundayNight = utc("2026-01-25T23:59:59Z").addingTimeInterval(0.999)
            #expect(boards.resetsAt(period: .today, now: sundayNight) == mondayMidnight.addingTimeInterval(7 * 86_400))
            #expect(boards.resetsAt(period: .thisWeek, now: sundayNight) == utc("2026-01-26T00:00:00Z"))
            // Across a year end and a leap day.
            #expect(boards.resetsAt(period: .today, now: utc("2026-12-31T12:00:00Z")) == utc("2027-01-01T00:00:00Z"))
            #expect(boards.resetsAt(period: .today, now: utc("2028-02-28T12:00:00Z")) == utc("2028-02-29T00:00:00Z"))
            #expect(boards.resetsAt(period: .thisWeek, now: utc("2026-12-31T12:00:00Z")) == utc("2027-01-04T00:00:00Z"))
            // The page carries it too.
            let page = try boards.top(level: .cruise, period: .today, now: wednesday)
            #expect(page.resetsAt == utc("2026-01-15T00:00:00Z"))
        }
    }

    // MARK: Periods

    @Test(arguments: StorageBackends.all) func periodsSeparateAcrossAUTCMidnightThatIsAlsoAMonday(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let repositories = store.repositories()
            let ann = try addRacer(repositories.players, "ann").id
            let games = repositories.games
            let boards = repositories.leaderboards
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

    // MARK: Order

    @Test(arguments: StorageBackends.all) func tiesGoToTheEarlierAchievementThenTheLowerPlayerID(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let repositories = store.repositories()
            // Ids in order of creation: ann, bob, cat, dan.
            let names = ["ann", "bob", "cat", "dan"]
            let players = try names.map { try addRacer(repositories.players, $0) }
            let ids = players.map(\.id)
            try #require(ids == ids.sorted() && Set(ids).count == 4)
            let games = repositories.games
            let noon = utc("2026-01-15T12:00:00Z")
            try games.record(scoredGame(player: ids[0], score: 40, endedAt: noon.addingTimeInterval(5)))
            try games.record(scoredGame(player: ids[3], score: 40, endedAt: noon))  // earlier: ahead of ann
            try games.record(scoredGame(player: ids[2], score: 40, endedAt: noon.addingTimeInterval(5.7)))  // same second as ann
            try games.record(scoredGame(player: ids[1], score: 41, endedAt: noon.addingTimeInterval(60)))
            let page = try repositories.leaderboards.top(level: .fast, period: .today, now: noon)
            #expect(page.entries.map(\.playerPublicID) == [players[1], players[3], players[0], players[2]].map(\.publicID))
            #expect(page.entries.map(\.displayName) == ["Racer bob", "Racer dan", "Racer ann", "Racer cat"])
            #expect(page.entries.map(\.rank) == [1, 2, 3, 4])
            #expect(page.entries[1].achievedAt == noon)
            for entry in page.entries {
                let mine = try repositories.leaderboards.aroundMe(
                    playerID: try #require(players.first { $0.publicID == entry.playerPublicID }).id,
                    level: .fast, period: .today, neighbours: 0, now: noon)
                #expect(mine?.me == entry)
            }
        }
    }

    // MARK: Paging

    @Test(arguments: StorageBackends.all) func keysetPagesReturnEveryEntryOnceWhileScoresArrive(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let repositories = store.repositories()
            let games = repositories.games
            let boards = repositories.leaderboards
            let noon = utc("2026-01-15T12:00:00Z")
            var players: [String: Int64] = [:]
            // 23 players; several share a score so that pages split ties.
            for index in 0..<23 {
                let name = "p\(index)"
                players[name] = try addRacer(repositories.players, name).id
                try games.record(scoredGame(player: players[name]!, score: 100 - index / 3, endedAt: noon.addingTimeInterval(Double(index % 3))))
            }
            let original = Set(players.keys.map { "Racer \($0)" })
            var seen: [String] = []
            var page = try boards.top(level: .fast, period: .allTime, limit: 5, now: noon)
            #expect(page.entries.map(\.rank) == Array(1...5))
            seen += page.entries.map(\.displayName)

            // Between pages: a new leader (OFFSET paging would now repeat an entry), and a
            // newcomer far below the cursor (reached later, once).
            let leader = try addRacer(repositories.players, "leader").id
            try games.record(scoredGame(player: leader, score: 500, endedAt: noon))
            let newcomer = try addRacer(repositories.players, "newcomer").id
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
                seen += page.entries.map(\.displayName)
            }
            #expect(Set(seen).count == seen.count, "an entry came twice: \(seen)")
            #expect(original.isSubset(of: Set(seen)))
            #expect(seen.contains("Racer newcomer"))
            #expect(!seen.contains("Racer leader"))
            #expect(seen.count == 24)
            #expect(pages == 5)
            #expect(page.entries.last?.displayName == "Racer newcomer")
            #expect(page.entries.last?.rank == 25)
        }
    }

    @Test(arguments: StorageBackends.all) func aFullLastPageHasNoCursorAndPagesStayOnTheirDay(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let repositories = store.repositories()
            let games = repositories.games
            let boards = repositories.leaderboards
            let evening = utc("2026-01-15T23:59:50Z")
            for index in 0..<4 {
                let player = try addRacer(repositories.players, "p\(index)").id
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

    @Test(arguments: StorageBackends.all) func badPagingRequestsAreRefused(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let repositories = store.repositories()
            let games = repositories.games
            let boards = repositories.leaderboards
            let noon = utc("2026-01-15T12:00:00Z")
            for index in 0..<3 {
                let player = try addRacer(repositories.players, "p\(index)").id
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

    @Test(arguments: StorageBackends.all) func aroundMeAtTheTopTheMiddleAndTheBottom(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let repositories = store.repositories()
            let games = repositories.games
            let boards = repositories.leaderboards
            let noon = utc("2026-01-15T12:00:00Z")
            var ids: [Int64] = []
            // p0 scores 110 (rank 1) … p10 scores 10 (rank 11).
            for index in 0...10 {
                ids.append(try addRacer(repositories.players, "p\(index)").id)
                try games.record(scoredGame(player: ids[index], score: 110 - 10 * index, endedAt: noon))
            }
            func around(_ index: Int, _ neighbours: Int = 2) throws -> [String] {
                let result = try #require(try boards.aroundMe(playerID: ids[index], level: .fast, period: .thisWeek, neighbours: neighbours, now: noon))
                #expect(result.me.displayName == "Racer p\(index)")
                #expect(result.me.rank == index + 1)
                #expect(result.periodKey == "2026-W03")
                return result.entries.map { "\($0.rank):\($0.displayName.dropFirst(6)):\($0.score)" }
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
            #expect(more.entries.map { "\($0.rank):\($0.displayName.dropFirst(6))" } == ["9:p8", "10:p9"])
            let bottom = try #require(try boards.aroundMe(playerID: ids[10], level: .fast, period: .thisWeek, neighbours: 2, now: noon))
            #expect(bottom.nextCursor == nil)
            let nearBottom = try #require(try boards.aroundMe(playerID: ids[8], level: .fast, period: .thisWeek, neighbours: 2, now: noon))
            #expect(nearBottom.nextCursor == nil)
            #expect(try boards.aroundMe(playerID: ids[8], level: .fast, period: .thisWeek, neighbours: 1, now: noon)?.nextCursor != nil)
        }
    }

    @Test(arguments: StorageBackends.all) func aroundMeWithoutAScoreIsNilAndAnUnknownPlayerIsNotFound(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let repositories = store.repositories()
            let ann = try addRacer(repositories.players, "ann").id
            let boards = repositories.leaderboards
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
}
