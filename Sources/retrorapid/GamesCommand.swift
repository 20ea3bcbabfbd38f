import Foundation
import RetroRapidRules
import RetroRapidDomain
import RetroRapidSupport

/// `retrorapid games show GAME_ID`: one game in full, by the id its player was shown
/// (`gameId` in the client and the protocol, `game.id` in the server's log lines): a player
/// writing to support about a game, or a mismatch `verify` listed. A stored game is replayed
/// like `verify` does; a running one shows its last checkpoint.
enum GamesCommand: Command {
    static let name = "games"
    static let summary = "show one game by the id its player was shown (gameId)"
    static let usage = """
        usage: retrorapid games show GAME_ID [--database-url URL | --database-path PATH] [--migrations-path DIR]

        show  One game by its gameId (16 hex digits, as the client, the server's log lines
              (game.id), 'players show' and 'verify' give it), or #ROW for a game stored
              before ids were kept. Prints its player, level, score, steps, how it ended,
              its times, whether its free play was given back (games ended by a server
              crash: at most one a player a day), and whether its replay matches what was
              stored. A game still running
              shows its last checkpoint instead.

        \(OperatorDatabase.optionsUsage)

        Exit status: 0 shown (a stored game's replay matches), 1 no such game or its replay
        does not match, 64 bad arguments.
        """

    static func run(arguments: [String]) throws -> Int32 {
        guard let subcommand = arguments.first, !subcommand.hasPrefix("-") else { throw UsageError("say what to do first: show") }
        guard subcommand == "show" else { throw UsageError("unknown games command '\(subcommand)'; use show") }
        let parsed = try PlayersCommand.parse(Array(arguments.dropFirst()), positionals: ["GAME_ID"], valueOptions: [])
        let storage = try OperatorDatabase(parsed).open()
        let wanted = parsed.positionals[0]
        let games = storage.games
        let stored: GameRecord?
        if wanted.hasPrefix("#") {
            guard let row = Int64(wanted.dropFirst()), row > 0 else {
                throw UsageError("#ROW needs the number 'players show' lists, got '\(wanted)'")
            }
            stored = try games.game(id: row)
        } else {
            stored = try games.game(publicID: wanted.lowercased())
        }
        let players = storage.players
        if let game = stored {
            return try show(game, player: try players.player(id: game.playerID))
        }
        if !wanted.hasPrefix("#"), let running = try storage.runningGames.running(publicID: wanted.lowercased()) {
            return try show(running, player: try players.player(id: running.playerID))
        }
        throw OperatorFailure("no game has the id '\(wanted)' (a game's id is the 16 hex digits its player was shown, e.g. d7043122b71bd216)")
    }

    private static func show(_ game: GameRecord, player: Player) throws -> Int32 {
        let mismatch = GameMismatch.check(game)
        var facts = TextTable(["game", game.displayID])
        facts.append(["player", "\(player.publicID) (\(player.displayName))"])
        facts.append(["level", game.level.rawValue + (game.practice ? " (practice: on no leaderboard)" : "")])
        facts.append(["score", String(game.score)])
        facts.append(["steps", String(game.steps)])
        facts.append(["end", endText(game) + ": " + endMeaning(game.endReason)])
        if game.endReason == .serverCrash {
            facts.append(["free play", refundText(game)])
        }
        facts.append(["started", OperatorTime.text(game.startedAt)])
        facts.append(["ended", OperatorTime.text(game.endedAt)])
        facts.append(["played", String(format: "%.1f s", Double(game.durationMilliseconds) / 1000)])
        facts.append(["seed", String(game.seed)])
        facts.append(["rules", "version \(game.rulesVersion)"])
        if let mismatch {
            facts.append(["replay", "DOES NOT MATCH: \(mismatch.reason)"])
        } else {
            facts.append(["replay", "matches (score \(game.score), \(game.steps) steps)"])
        }
        print(facts.render())
        return mismatch == nil ? 0 : 1
    }

    private static func show(_ game: RunningGameRecord, player: Player) throws -> Int32 {
        var facts = TextTable(["game", game.publicID])
        facts.append(["player", "\(player.publicID) (\(player.displayName))"])
        facts.append(["level", game.level.rawValue + (game.practice ? " (practice)" : "")])
        facts.append(["end", "running, not ended yet"])
        facts.append(["started", OperatorTime.text(game.startedAt)])
        facts.append(["free play", game.freePlay
            ? "yes (given back if the server crashes, at most \(RunningGameRecovery.refundsPerPlayerPerDay) a player a day)" : "no"])
        if let log = try? InputLog(encoded: game.inputLog),
           let state = try? Replay.run(seed: game.seed, level: game.level, log: log, rulesVersion: game.rulesVersion) {
            facts.append(["checkpoint", "\(OperatorTime.text(game.checkpointedAt)): score \(state.score), \(log.steps) steps"])
        } else {
            facts.append(["checkpoint", "\(OperatorTime.text(game.checkpointedAt)): cannot be replayed by this build"])
        }
        print(facts.render())
        return 0
    }

    /// The end as tables show it, with a refunded play noted.
    static func endText(_ game: GameRecord) -> String {
        game.playRefunded ? "\(game.endReason.rawValue) (play refunded)" : game.endReason.rawValue
    }

    /// What became of a `server_crash` game's free play (docs/GAME_RULES.md, "When the server crashes").
    private static func refundText(_ game: GameRecord) -> String {
        let cap = RunningGameRecovery.refundsPerPlayerPerDay
        return game.playRefunded
            ? "given back (at most \(cap) a player a day for games the server lost)"
            : "not given back: it used none (practice, unlimited play), or the player's \(cap) of that day was given back already"
    }

    private static func endMeaning(_ reason: GameEndReason) -> String {
        switch reason {
        case .crash: "the player crashed"
        case .abandoned: "the player quit or did not come back in time"
        case .shutdown: "the server stopped (SIGTERM) and saved it"
        case .serverCrash: "the server died while it ran; ended at its next start from its last checkpoint"
        }
    }
}
