import Foundation
import RetroRapidRules
import RetroRapidDomain
import RetroRapidStorage
import RetroRapidSupport

/// `retrorapid crash-writer`: a test aid for the durability proof (nothing
/// acknowledged is lost: docs/OPERATIONS.md). Not for production databases: it needs `--database-path` spelled out
/// and never falls back to the server's configured path.
///
/// It stores finished games in a loop exactly as the server will: each through
/// `GameRepository.record`, one IMMEDIATE transaction per game, on a connection opened with
/// the defaults (`synchronous=FULL`). After `record` returns, and only then, it writes the
/// game's id on its own line to standard output with write(2), unbuffered: a line in the pipe
/// is an acknowledgement, as a game-over message to a player would be. The durability test
/// (Tests/RetroRapidSQLiteTests/DurabilityTests.swift) reads those lines, SIGKILLs it in the
/// middle of its stream, reopens the file, and checks that every acknowledged game is there,
/// whole.
enum CrashWriterCommand: Command {
    static let name = "crash-writer"
    static let summary = "test aid: store games in a loop, printing each id once committed (durability test)"
    static let usage = """
        usage: retrorapid crash-writer --database-path PATH [--migrations-path DIR] [--players N] [--games N]
                                       [--synchronous full|normal]

        For the durability test, not for a live database. Migrates PATH, adds N players
        (default 3), then stores real finished games (played to a crash from a seed, with their
        input logs, about one in seven a practice game) through GameRepository.record, one
        transaction each as the server does, round-robin over the players and levels. Prints
        each game's id on its own line to standard output, unbuffered, only after its commit
        returned. Runs until killed, or for --games N games.

          --database-path PATH     the database file (required: it never uses the server's)
          --migrations-path DIR    the folder of NNNN_name.sql files (default: RETRORAPID_MIGRATIONS_PATH,
                                   the env file, or looked up as serve does)
          --players N              players to create and play as (default: 3)
          --games N                stop after N games (default: 0, run until killed)
          --synchronous MODE       full (default, the server's setting) or normal
          (--database and --migrations are older names for the first two, still accepted)
        """

    static func run(arguments: [String]) throws -> Int32 {
        let parsed = try OperatorDatabase.reportingRefusals {
            try ParsedArguments(arguments, valueOptions: ["database-path", "migrations-path", "players", "games", "synchronous"],
                                aliases: OperatorDatabase.aliases)
        }
        guard parsed.positionals.isEmpty else { throw UsageError("unexpected argument '\(parsed.positionals[0])'") }
        guard let path = parsed.value("database-path"), !path.isEmpty else {
            throw UsageError("crash-writer needs --database-path PATH (it never writes to the server's database by default)")
        }
        let (playerCount, gameLimit, synchronous) = try OperatorDatabase.reportingRefusals {
            (try parsed.int("players", default: 3, range: 1...1000),
             try parsed.int("games", default: 0, range: 0...100_000_000),
             try parsed.string("synchronous", default: "full", allowed: ["full", "normal"]))
        }
        let migrationsPath = try OperatorDatabase.migrationsFolder(parsed)
        let connection = try StorageFactory.open(path: path, migrationsPath: migrationsPath,
                                                 ifMissing: .create, durability: synchronous == "full" ? .everyCommit : .lastCommitsMayBeLost)
        try connection.migrate()
        let storage = connection.repositories(RepositorySettings())

        var players: [Int64] = []
        for number in 1...playerCount {
            let (player, _) = try storage.players.createPlayer(displayName: "Crash Writer \(number)", deviceLabel: "crash-writer", now: Date())
            players.append(player.id)
        }
        OperatorOutput.note("crash-writer: storing games in \(path) as \(playerCount) players, synchronous=\(synchronous)")

        let games = storage.games
        var generator = SystemRandomNumberGenerator()
        let firstSeed = generator.next() >> 1
        var count = 0
        while gameLimit == 0 || count < gameLimit {
            let seed = firstSeed &+ UInt64(count)
            let level = SpeedLevel.allCases[count % SpeedLevel.allCases.count]
            let game = play(seed: seed, level: level, dodgeSteps: Int(seed % 60),
                            player: players[count % players.count], practice: count % 7 == 6)
            let recorded = try games.record(game)
            // The commit has returned: only now may the game be acknowledged.
            OperatorOutput.writeUnbuffered(String(recorded.game.id))
            count += 1
        }
        return 0
    }

    /// A real game: follows the safe-lane cue for `dodgeSteps` steps, then stops moving until a
    /// car hits (or 5,000 steps pass, stored as abandoned). What it stores is what a replay
    /// reaches, so `retrorapid verify` passes on the database it writes.
    static func play(seed: UInt64, level: SpeedLevel, dodgeSteps: Int, player: Int64, practice: Bool) -> NewGame {
        var state = GameState(seed: seed, level: level)
        var sink = DiscardingSink()
        var moves: [InputLog.Entry] = []
        while !state.isOver, state.step < dodgeSteps + 5_000 {
            if state.step < dodgeSteps, !state.safeLanes.contains(state.lane), !state.safeLanes.isEmpty {
                let direction: Direction = state.safeLanes.rawValue < LaneSet(lane: state.lane).rawValue ? .left : .right
                moves.append(InputLog.Entry(afterStep: state.step, direction: direction))
                state.move(direction, into: &sink)
                if state.isOver { break }
            }
            state.advance(into: &sink)
        }
        let durationMilliseconds = state.step * 40
        let endedAt = Date()
        return NewGame(
            playerID: player, level: level, seed: seed, inputLog: InputLog(steps: state.step, moves: moves),
            score: state.score, steps: state.step, endReason: state.isOver ? .crash : .abandoned, practice: practice,
            startedAt: endedAt.addingTimeInterval(-Double(durationMilliseconds) / 1000), endedAt: endedAt,
            durationMilliseconds: durationMilliseconds)
    }
}
