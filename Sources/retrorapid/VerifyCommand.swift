import Foundation
import RetroRapidDomain
import RetroRapidSupport

/// `retrorapid verify`: re-simulates every stored game with the rules and lists those whose
/// stored score or steps are not what their seed and input log earn. The replay is
/// `GameRepository.verifyAll` (which uses `Replay.run`); this only prints and sets the status.
enum VerifyCommand: Command {
    static let name = "verify"
    static let summary = "re-simulate every stored game and list scores that do not match"
    static let usage = """
        usage: retrorapid verify [--database-url URL | --database-path PATH] [--migrations-path DIR]

        Replays every stored game from its seed, level, rules version and input log, and
        lists each game whose stored score or steps differ from the replay's, whose end
        disagrees with it, or which cannot be replayed, by the id its player was shown
        (gameId; #ROW for a game stored before ids were kept). A mismatch means the row was
        changed after the game (or the rules changed without a new rules version). Games
        ended by a server crash (server_crash) are replayed to their last checkpoint, where
        their log ends, like a quit game. Safe while the server runs: it reads in short
        batches and writes nothing. One game in full: 'retrorapid games show GAME_ID'.

        \(OperatorDatabase.optionsUsage)

        Exit status: 0 every game matches, 1 some game does not (or the check failed),
        64 bad arguments.
        """

    static func run(arguments: [String]) throws -> Int32 {
        let parsed = try OperatorDatabase.reportingRefusals {
            try ParsedArguments(arguments, valueOptions: OperatorDatabase.valueOptions, aliases: OperatorDatabase.aliases)
        }
        guard parsed.positionals.isEmpty else { throw UsageError("unexpected argument '\(parsed.positionals[0])'") }
        let storage = try OperatorDatabase(parsed).open()
        let games = storage.games
        let players = storage.players

        let started = Date()
        var checked = 0
        var serverCrashes = 0
        let isTerminal = isatty(STDERR_FILENO) != 0
        let mismatches = try games.verifyAll(
            progress: { count in
                checked = count
                // Progress for a person watching; a log or a pipe gets only the result.
                if isTerminal, count > 0, count % 10_000 == 0 { OperatorOutput.note("checked \(count) games…") }
            },
            visiting: { game in if game.endReason == .serverCrash { serverCrashes += 1 } })
        let seconds = Date().timeIntervalSince(started)
        let crashes = serverCrashes == 0 ? "" : " (\(serverCrashes) ended by a server crash, replayed to their last checkpoint)"

        if mismatches.isEmpty {
            print("verified \(checked) games\(crashes) in \(String(format: "%.1f", seconds)) s: every stored score matches its replay")
            return 0
        }
        var table = TextTable(["GAME", "PLAYER", "STORED SCORE", "STORED STEPS", "REPLAYED SCORE", "REPLAYED STEPS", "WHY"])
        for mismatch in mismatches {
            let player = (try? players.player(id: mismatch.playerID).publicID) ?? "#\(mismatch.playerID)"
            table.append([
                mismatch.publicID ?? "#\(mismatch.gameID)", player, String(mismatch.storedScore), String(mismatch.storedSteps),
                mismatch.replayedScore.map(String.init) ?? "-", mismatch.replayedSteps.map(String.init) ?? "-", mismatch.reason,
            ])
        }
        print(table.render())
        print("\(mismatches.count) of \(checked) games\(crashes) do not match their replay")
        return 1
    }
}
