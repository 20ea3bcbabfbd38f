import Foundation
import RetroRapidRules
import RetroRapidDomain
import RetroRapidSupport

/// `retrorapid players show|grant-unlimited|revoke-device|rename`: what support needs about one player
/// (docs/OPERATIONS.md). Players are named by their public id, the 12 characters shown on leaderboards;
/// the row ids stay inside the server. The rules live in the repositories; this parses, calls
/// them and prints.
enum PlayersCommand: Command {
    static let name = "players"
    static let summary = "show a player; grant unlimited play; revoke a device; rename"
    static let usage = """
        usage: retrorapid players show PUBLIC_ID
               retrorapid players grant-unlimited PUBLIC_ID [--reason TEXT]
               retrorapid players revoke-device PUBLIC_ID DEVICE_ID
               retrorapid players rename PUBLIC_ID NEW_NAME
               (each also takes --database-url URL or --database-path PATH, and --migrations-path DIR)

        show             The player's name, when they joined, their devices (last seen,
                         revoked), free plays left today, unlimited play, redeemed codes,
                         orders, best scores with ranks, and latest games by the id the
                         player was shown (gameId; 'retrorapid games show GAME_ID' has one
                         in full), a game running now first.
        grant-unlimited  Grants unlimited play, recorded as granted by the operator with the
                         reason (default: "granted with the operator CLI"). A player who
                         already has it keeps their first grant.
          --reason TEXT  why, 1 to 200 characters, e.g. --reason "press: Retro Gamer"
        revoke-device    Signs a device out for good (DEVICE_ID as 'players show' lists it):
                         its token stops working at once. Unlike the player, the operator may
                         revoke the last device, e.g. a stolen phone; nobody can then sign in
                         as that player again.
        rename           Changes the player's display name (an offensive one), by the rules
                         the player's own change follows: 1 to 24 characters.

        \(OperatorDatabase.optionsUsage)

        Exit status: 0 done, 1 refused (unknown player or device, …), 64 bad arguments.
        """

    static func run(arguments: [String]) throws -> Int32 {
        guard let subcommand = arguments.first, !subcommand.hasPrefix("-") else {
            throw UsageError("say what to do first: show, grant-unlimited, revoke-device or rename")
        }
        let rest = Array(arguments.dropFirst())
        switch subcommand {
        case "show": return try show(rest)
        case "grant-unlimited": return try grantUnlimited(rest)
        case "revoke-device": return try revokeDevice(rest)
        case "rename": return try rename(rest)
        default: throw UsageError("unknown players command '\(subcommand)'; use show, grant-unlimited, revoke-device or rename")
        }
    }

    // MARK: - show

    static func show(_ arguments: [String]) throws -> Int32 {
        let parsed = try parse(arguments, positionals: ["PUBLIC_ID"], valueOptions: [])
        let storage = try OperatorDatabase(parsed).open()
        let now = try OperatorClock.now()
        let player = try findPlayer(parsed.positionals[0], in: storage)

        let quota = try storage.quota.status(playerID: player.id, now: now)
        let entitlement = try storage.entitlements.unlimited(playerID: player.id)
        let orderRepository = storage.orders
        let orders = try orderRepository.orders(playerID: player.id)
        let redemptions = try storage.codes.redemptions(playerID: player.id)
        let devices = try storage.players.devices(playerID: player.id)
        let games = try storage.games.games(playerID: player.id, limit: 5)
        let running = try storage.runningGames.running(playerID: player.id)
        let leaderboards = storage.leaderboards

        var facts = TextTable(["player", player.publicID])
        facts.append(["name", player.displayName])
        facts.append(["created", OperatorTime.text(player.createdAt)])
        if quota.unlimited {
            facts.append(["plays", "no daily limit (unlimited play)"])
        } else {
            facts.append(["plays", "\(quota.playsLeft) of \(quota.dailyFreePlays) free plays left today (\(quota.day) UTC); resets at \(OperatorTime.text(quota.resetsAt))"])
        }
        if let entitlement {
            facts.append(["unlimited", "yes, since \(OperatorTime.text(entitlement.grantedAt)) (\(entitlement.source.rawValue): \(entitlement.reference))"])
        } else {
            let due = try orderRepository.priceDue(playerID: player.id, now: now)
            let discount = due.discountCode.map { " with code \($0)" } ?? ""
            facts.append(["unlimited", "no; price due now \(due.amount)\(discount)"])
        }
        let codes = redemptions.map { "\($0.code) (\($0.kind == .unlock ? "unlock" : "discount"), \(OperatorTime.text($0.redeemedAt)))" }
        facts.append(["codes", codes.isEmpty ? "none redeemed" : codes.joined(separator: ", ")])
        print(facts.render())

        print("\ndevices")
        var deviceTable = TextTable(["ID", "LABEL", "CREATED", "LAST SEEN", "REVOKED"])
        for device in devices {
            deviceTable.append([
                String(device.id), device.label.isEmpty ? "(no label)" : device.label, OperatorTime.text(device.createdAt),
                device.lastSeenAt.map(OperatorTime.text) ?? "never", device.revokedAt.map(OperatorTime.text) ?? "no",
            ])
        }
        print(devices.isEmpty ? "  none" : deviceTable.render(indent: "  "))

        print("\norders")
        var orderTable = TextTable(["ORDER", "AMOUNT", "CODE", "STATUS", "CREATED", "PAID", "PAID BY"])
        for order in orders {
            orderTable.append([
                order.publicID, order.amount.description, order.discountCode ?? "-", order.status.rawValue,
                OperatorTime.text(order.createdAt), order.paidAt.map(OperatorTime.text) ?? "-", order.providerEventID ?? "-",
            ])
        }
        print(orders.isEmpty ? "  none" : orderTable.render(indent: "  "))

        print("\nbest scores (score, rank of players on the board)")
        var scoreTable = TextTable(["LEVEL", "TODAY", "THIS WEEK", "ALL TIME"])
        var anyScore = false
        for level in SpeedLevel.allCases {
            var row = [level.rawValue]
            for period in [LeaderboardPeriod.today, .thisWeek, .allTime] {
                if let mine = try leaderboards.aroundMe(playerID: player.id, level: level, period: period, neighbours: 0, now: now) {
                    row.append("\(mine.me.score) (#\(mine.me.rank) of \(mine.total))")
                    anyScore = true
                } else {
                    row.append("-")
                }
            }
            scoreTable.append(row)
        }
        print(anyScore ? scoreTable.render(indent: "  ") : "  none")

        print("\nlatest games")
        var gameTable = TextTable(["GAME", "LEVEL", "SCORE", "STEPS", "ENDED", "END", "PRACTICE"])
        for game in running {
            // What its last checkpoint holds; the score comes with the end.
            let steps = (try? InputLog(encoded: game.inputLog).steps).map(String.init) ?? "?"
            gameTable.append([
                game.publicID, game.level.rawValue, "-", steps, "-",
                "running (checkpoint \(OperatorTime.text(game.checkpointedAt)))", game.practice ? "yes" : "no",
            ])
        }
        for game in games {
            gameTable.append([
                game.displayID, game.level.rawValue, String(game.score), String(game.steps),
                OperatorTime.text(game.endedAt), GamesCommand.endText(game), game.practice ? "yes" : "no",
            ])
        }
        print(games.isEmpty && running.isEmpty ? "  none" : gameTable.render(indent: "  "))
        return 0
    }

    // MARK: - grant-unlimited

    static func grantUnlimited(_ arguments: [String]) throws -> Int32 {
        let parsed = try parse(arguments, positionals: ["PUBLIC_ID"], valueOptions: ["reason"])
        let reason = parsed.value("reason") ?? "granted with the operator CLI"
        let (connection, storage) = try OperatorDatabase(parsed).openForChange()
        let now = try OperatorClock.now()
        let player = try findPlayer(parsed.positionals[0], in: storage)
        let granted = try OperatorDatabase.reportingRefusals {
            try OperatorDatabase.actions(connection, storage).grantUnlimited(player, reason: reason, now: now)
        }
        if let before = granted.before {
            print("player \(player.publicID) (\(player.displayName)) already has unlimited play since \(OperatorTime.text(before.grantedAt)) (\(before.source.rawValue): \(before.reference)); nothing changed")
        } else if let after = granted.after {
            print("granted unlimited play to player \(player.publicID) (\(player.displayName)): \(after.reference)")
        }
        return 0
    }

    // MARK: - revoke-device

    static func revokeDevice(_ arguments: [String]) throws -> Int32 {
        let parsed = try parse(arguments, positionals: ["PUBLIC_ID", "DEVICE_ID"], valueOptions: [])
        guard let deviceID = Int64(parsed.positionals[1]), deviceID > 0 else {
            throw UsageError("DEVICE_ID is the number in the ID column of 'retrorapid players show', got '\(parsed.positionals[1])'")
        }
        let (connection, storage) = try OperatorDatabase(parsed).openForChange()
        let now = try OperatorClock.now()
        let player = try findPlayer(parsed.positionals[0], in: storage)
        let revoked = try OperatorDatabase.reportingRefusals { () throws -> OperatorActions.Change<Device> in
            do {
                return try OperatorDatabase.actions(connection, storage).revokeDevice(player, deviceID: deviceID, now: now)
            } catch let error as StoreError where error.code == .notFound && error.field == "deviceID" {
                throw OperatorFailure("player \(player.publicID) has no device \(deviceID); 'retrorapid players show \(player.publicID)' lists their devices")
            }
        }
        let label = revoked.before.label.isEmpty ? "" : " (\(revoked.before.label))"
        if let revokedAt = revoked.before.revokedAt {
            print("device \(deviceID)\(label) of player \(player.publicID) was already revoked at \(OperatorTime.text(revokedAt)); nothing changed")
            return 0
        }
        print("revoked device \(deviceID)\(label) of player \(player.publicID); its token no longer signs in")
        if !(try storage.players.devices(playerID: player.id)).contains(where: { !$0.isRevoked }) {
            OperatorOutput.note("warning: player \(player.publicID) has no signed-in device left, so nobody can sign in as them again")
        }
        return 0
    }

    // MARK: - rename

    static func rename(_ arguments: [String]) throws -> Int32 {
        let parsed = try parse(arguments, positionals: ["PUBLIC_ID", "NEW_NAME"], valueOptions: [])
        let (connection, storage) = try OperatorDatabase(parsed).openForChange()
        let now = try OperatorClock.now()
        let player = try findPlayer(parsed.positionals[0], in: storage)
        let renamed = try OperatorDatabase.reportingRefusals {
            try OperatorDatabase.actions(connection, storage).rename(player, to: parsed.positionals[1], now: now)
        }
        if renamed.changed {
            print("renamed player \(player.publicID) from \(renamed.before.displayName) to \(renamed.after.displayName)")
        } else {
            print("player \(player.publicID) is already called \(renamed.after.displayName); nothing changed")
        }
        return 0
    }

    // MARK: - Shared

    /// Parses exactly `positionals` (named for the error) plus the database options and
    /// `valueOptions`.
    static func parse(_ arguments: [String], positionals names: [String], valueOptions: Set<String>) throws -> ParsedArguments {
        let parsed = try OperatorDatabase.reportingRefusals {
            try ParsedArguments(arguments, valueOptions: OperatorDatabase.valueOptions.union(valueOptions), aliases: OperatorDatabase.aliases)
        }
        guard parsed.positionals.count >= names.count else {
            throw UsageError("missing \(names[parsed.positionals.count])")
        }
        guard parsed.positionals.count == names.count else {
            throw UsageError("unexpected argument '\(parsed.positionals[names.count])'")
        }
        return parsed
    }

    /// The player with this public id; an unknown one is a refusal (exit 1) naming it.
    static func findPlayer(_ publicID: String, in storage: StorageRepositories) throws -> Player {
        do {
            return try storage.players.player(publicID: publicID)
        } catch let error as StoreError where error.code == .notFound {
            throw OperatorFailure("no player has the id '\(publicID)' (a player's id is the 12 characters shown on leaderboards and by the client)")
        }
    }
}

/// `retrorapid orders mark-paid`: the operator's way to pay an order (docs/OPERATIONS.md: an order
/// becomes paid through the provider's webhook or the operator's CLI), e.g. after a payment
/// the provider confirmed by other means. Kept beside `players` because an order is always
/// one player's, and `players show` lists its ids.
enum OrdersCommand: Command {
    static let name = "orders"
    static let summary = "mark an order paid (grants its player unlimited play)"
    static let usage = """
        usage: retrorapid orders mark-paid ORDER_ID [--reason TEXT]
                                           [--database-url URL | --database-path PATH] [--migrations-path DIR]

        Marks the order (ord_…, as 'retrorapid players show' lists it) paid and grants its
        player unlimited play, in one transaction. The payment is recorded as
        "operator: TEXT" (default "operator: marked paid with the CLI") where the provider's
        event id would go. Paying a paid order changes nothing.

        \(OperatorDatabase.optionsUsage)

        Exit status: 0 done, 1 refused (unknown order), 64 bad arguments.
        """

    static func run(arguments: [String]) throws -> Int32 {
        guard let subcommand = arguments.first, !subcommand.hasPrefix("-") else { throw UsageError("say what to do first: mark-paid") }
        guard subcommand == "mark-paid" else { throw UsageError("unknown orders command '\(subcommand)'; use mark-paid") }
        let parsed = try PlayersCommand.parse(Array(arguments.dropFirst()), positionals: ["ORDER_ID"], valueOptions: ["reason"])
        let reason = parsed.value("reason") ?? "marked paid with the CLI"
        let (connection, storage) = try OperatorDatabase(parsed).openForChange()
        let now = try OperatorClock.now()
        let orderID = parsed.positionals[0]
        let paid = try OperatorDatabase.reportingRefusals {
            try OperatorDatabase.actions(connection, storage).markPaid(orderID: orderID, reason: reason, now: now)
        }
        let player = try storage.players.player(id: paid.after.playerID)
        if !paid.changed {
            print("order \(orderID) was already paid at \(paid.before.paidAt.map(OperatorTime.text) ?? "?") (\(paid.before.providerEventID ?? "?")); nothing changed")
        } else {
            print("order \(orderID) (\(paid.after.amount)) is paid; player \(player.publicID) (\(player.displayName)) has unlimited play")
        }
        return 0
    }
}
