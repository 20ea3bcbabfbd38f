import Foundation
import RetroRapidDomain
import RetroRapidSupport

/// `retrorapid seed-players`: creates many players with unlimited play and writes their device
/// tokens to a file, for `retrorapid loadtest` and for development. Not for a live database:
/// these players are real rows (on the leaderboards once they play).
enum SeedPlayersCommand: Command {
    static let name = "seed-players"
    static let summary = "create players with unlimited play for load tests; write their tokens"
    static let usage = """
        usage: retrorapid seed-players --count N --tokens-file FILE
                                       [--database-url URL | --database-path PATH] [--migrations-path DIR]

          --count N           players to create (1 to 100000), each with one device and
                              unlimited play (so a load test never runs out of plays)
          --tokens-file FILE  where to write the device tokens, one per line; created with mode
                              0600 and refused if it exists (tokens are passwords)
        \(OperatorDatabase.optionsUsage)

        For load tests and development only. Writes with synchronous=OFF for speed: a crash
        mid-way can lose the players it made, which are only test data.
        """

    static func run(arguments: [String]) throws -> Int32 {
        let parsed = try OperatorDatabase.reportingRefusals {
            try ParsedArguments(arguments, valueOptions: OperatorDatabase.valueOptions.union(["count", "tokens-file"]), aliases: OperatorDatabase.aliases)
        }
        guard parsed.positionals.isEmpty else { throw UsageError("unexpected argument '\(parsed.positionals[0])'") }
        let count: Int
        do {
            count = try parsed.int("count", default: 0, range: 1...100_000)
        } catch let error as ArgumentError {
            throw UsageError(error.description)
        }
        guard let tokensPath = parsed.value("tokens-file"), !tokensPath.isEmpty else {
            throw UsageError("--tokens-file FILE is required")
        }
        guard !FileManager.default.fileExists(atPath: tokensPath) else {
            throw OperatorFailure("\(tokensPath) exists; choose a new file (tokens are never overwritten)")
        }
        // Throwaway load-test players: commits need not survive a power loss.
        let storage = try OperatorDatabase(parsed).open(durability: .none)
        let now = try OperatorClock.now()
        let players = storage.players
        let entitlements = storage.entitlements
        var tokens = ""
        tokens.reserveCapacity(count * 44)
        for number in 1...count {
            let (player, token) = try players.createPlayer(displayName: "Load \(number)", deviceLabel: "loadtest", now: now)
            try entitlements.grantUnlimited(playerID: player.id, source: .operator, reference: "seed-players", now: now)
            tokens += token + "\n"
        }
        guard FileManager.default.createFile(atPath: tokensPath, contents: Data(tokens.utf8),
                                             attributes: [.posixPermissions: 0o600]) else {
            throw OperatorFailure("could not write \(tokensPath)")
        }
        print("created \(count) players with unlimited play; tokens in \(tokensPath)")
        return 0
    }
}
