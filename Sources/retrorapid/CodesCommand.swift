import Foundation
import RetroRapidDomain
import RetroRapidSupport

/// `retrorapid codes create|list|disable`: the operator's promo codes (docs/OPERATIONS.md,
/// "Codes"). The rules (normalising, prices, windows, caps) live in
/// `RetroRapidStorage.CodeRepository`; this parses, calls it and prints.
enum CodesCommand: Command {
    static let name = "codes"
    static let summary = "create, list and disable discount and unlock codes"
    static let usage = """
        usage: retrorapid codes create (CODE [--force] | --random) (--discount AMOUNT --currency CUR | --unlock)
                                       [--starts TIME] [--expires TIME] [--max-redemptions N]
               retrorapid codes list
               retrorapid codes disable CODE
               (each also takes --database-url URL or --database-path PATH, and --migrations-path DIR)

        create    Makes a code. A discount code sets the price of unlimited play while it is
                  live, for the players who redeemed it; an unlock code grants unlimited play.
                  CODE is 4 to 32 letters and digits; case, dashes and spaces are ignored
                  (arctic-conf is ARCTICCONF). Codes are never reused, even once disabled.
                  Anyone may try codes, so a code that is easy to guess is refused: one of
                  fewer than \(CodeStrength.minimumLength) letters and digits, only letters or only digits, more than
                  \(CodeStrength.longestRun) letters (a word) or digits (a date) in a row, a repeat or a sequence.
          --random              make a strong random code (\(CodeStrength.randomLength) symbols, shown as K7Q4-M2XD-9P3R)
          --force               create CODE even if it is easy to guess (a warning says why); the
                                server's limits on failed codes are then all that protects it
          --discount AMOUNT     the price while the code is live, as a decimal: 0.99
          --currency CUR        its ISO 4217 currency, e.g. GBP (needed with --discount)
          --unlock              grant unlimited play instead of a discount
          --starts TIME         redeemable from TIME on (default: at once)
          --expires TIME        redeemable up to and including TIME (default: never expires)
          --max-redemptions N   how many players may redeem it (default: no cap)
                  TIME is ISO 8601 with a zone: 2026-02-28T23:59:59Z or 2026-03-01T00:59:59+01:00.
        list      Every code, oldest first: kind, price, window, redemptions of the cap,
                  when disabled, and whether it is live now.
        disable   Withdraws a code for good: it can no longer be redeemed, and its discount
                  stops applying to orders made from now on.

        \(OperatorDatabase.optionsUsage)

        Examples (the launch offer, a word people will type, so forced; a press code nobody guesses):
          retrorapid codes create ARCTICCONF --force --discount 0.99 --currency GBP --expires 2026-02-28T23:59:59Z
          retrorapid codes create --random --unlock --max-redemptions 50

        Exit status: 0 done, 1 refused (the code exists, is unknown, …), 64 bad arguments.
        A refused or mistyped command changes nothing.
        """

    static func run(arguments: [String]) throws -> Int32 {
        guard let subcommand = arguments.first, !subcommand.hasPrefix("-") else {
            throw UsageError("say what to do first: create, list or disable")
        }
        let rest = Array(arguments.dropFirst())
        switch subcommand {
        case "create": return try create(rest)
        case "list": return try list(rest)
        case "disable": return try disable(rest)
        default: throw UsageError("unknown codes command '\(subcommand)'; use create, list or disable")
        }
    }

    // MARK: - create

    /// What `create` was asked for, checked before the database is touched.
    struct CreateRequest {
        /// As typed, or a new random one (`--random`).
        var code: String
        var random: Bool
        /// Why the code is easy to guess, when `--force` created it anyway: a warning to print.
        var weaknesses: [CodeStrength.Weakness]
        var kind: PromoCode.Kind
        var startsAt: Date?
        var expiresAt: Date?
        var maxRedemptions: Int?
    }

    static func parseCreate(_ arguments: [String]) throws -> (CreateRequest, ParsedArguments) {
        let parsed = try OperatorDatabase.reportingRefusals {
            try ParsedArguments(
                arguments, booleanFlags: ["unlock", "random", "force"],
                valueOptions: OperatorDatabase.valueOptions.union(["discount", "currency", "starts", "expires", "max-redemptions"]),
                aliases: OperatorDatabase.aliases
            )
        }
        let random = parsed.flag("random")
        if random, let code = parsed.positionals.first {
            throw UsageError("give either CODE or --random, not both (got '\(code)' and --random)")
        }
        guard let code = random ? CodeStrength.random() : parsed.positionals.first else {
            throw UsageError("codes create needs the CODE to create, or --random to make a strong one")
        }
        guard random || parsed.positionals.count == 1 else { throw UsageError("unexpected argument '\(parsed.positionals[1])'") }

        let kind: PromoCode.Kind
        switch (parsed.value("discount"), parsed.flag("unlock")) {
        case (.some, true):
            throw UsageError("give either --discount AMOUNT --currency CUR or --unlock, not both")
        case (nil, false):
            throw UsageError("say what the code does: --discount AMOUNT --currency CUR, or --unlock")
        case (nil, true):
            guard parsed.value("currency") == nil else {
                throw UsageError("--currency goes with --discount; an unlock code has no price")
            }
            kind = .unlock
        case (.some(let amount), false):
            guard let currency = parsed.value("currency") else {
                throw UsageError("--discount needs --currency, e.g. --discount \(amount) --currency GBP")
            }
            guard currency.utf8.count == 3, currency.allSatisfy({ $0.isASCII && $0.isLetter }) else {
                throw UsageError("--currency expects a three-letter ISO 4217 code such as GBP, got '\(currency)'")
            }
            // Parsed as text into minor units: no floating point between "0.99" and 99.
            guard let price = Money(decimal: amount, currency: currency) else {
                let decimals = Money.minorUnitDigits(for: currency)
                let example = decimals == 0 ? "500" : "0." + String(repeating: "9", count: decimals)
                throw UsageError("--discount expects an amount such as \(example) (digits, and at most \(decimals) decimals for \(currency.uppercased())), got '\(amount)'")
            }
            kind = .discount(price)
        }

        func time(_ option: String) throws -> Date? {
            guard let text = parsed.value(option) else { return nil }
            guard let date = OperatorTime.parse(text) else {
                throw UsageError("--\(option) expects \(OperatorTime.expected), got '\(text)'")
            }
            return date
        }
        var cap: Int?
        if parsed.value("max-redemptions") != nil {
            cap = try OperatorDatabase.reportingRefusals {
                try parsed.int("max-redemptions", default: 0, range: 1...1_000_000_000)
            }
        }
        let startsAt = try time("starts")
        let expiresAt = try time("expires")
        // Last of the checks on the arguments, so every other mistake is named first. A
        // malformed code is refused here as the repository would (exit 64).
        let weaknesses = try OperatorDatabase.reportingRefusals { try CodeStrength.weaknesses(of: code) }
        if !weaknesses.isEmpty && !parsed.flag("force") {
            throw UsageError(CodeStrength.explanation(code: try PromoCode.normalise(code), weaknesses))
        }
        let request = CreateRequest(code: code, random: random, weaknesses: weaknesses, kind: kind, startsAt: startsAt,
                                    expiresAt: expiresAt, maxRedemptions: cap)
        return (request, parsed)
    }

    static func create(_ arguments: [String]) throws -> Int32 {
        let (request, parsed) = try parseCreate(arguments)
        let operatorDatabase = try OperatorDatabase(parsed)
        let now = try OperatorClock.now()
        // The repository checks the rest (code shape, price range, window, cap) before it
        // writes, so a refusal leaves the database as it was.
        let (connection, storage) = try operatorDatabase.openForChange()
        let created = try OperatorDatabase.reportingRefusals {
            try OperatorDatabase.actions(connection, storage).createCode(
                request.code, kind: request.kind, startsAt: request.startsAt, expiresAt: request.expiresAt,
                maxRedemptions: request.maxRedemptions, now: now)
        }
        print("created code \(created.code): \(created.kindText), \(created.windowText), \(created.capText)")
        if request.random {
            print("give it out as \(CodeStrength.grouped(created.code)) (case, dashes and spaces do not matter)")
        }
        if !request.weaknesses.isEmpty {
            let reasons = request.weaknesses.map(\.description).joined(separator: "; ")
            FileHandle.standardError.write(Data(("retrorapid: warning: code \(created.code) is easy to guess (\(reasons)); "
                + "created anyway because of --force\n").utf8))
        }
        return 0
    }

    // MARK: - list

    static func list(_ arguments: [String]) throws -> Int32 {
        let parsed = try OperatorDatabase.reportingRefusals {
            try ParsedArguments(arguments, valueOptions: OperatorDatabase.valueOptions, aliases: OperatorDatabase.aliases)
        }
        guard parsed.positionals.isEmpty else { throw UsageError("unexpected argument '\(parsed.positionals[0])'") }
        let storage = try OperatorDatabase(parsed).open()
        let now = try OperatorClock.now()
        let codes = try storage.codes.list()
        guard !codes.isEmpty else {
            print("no codes yet; create one with 'retrorapid codes create'")
            return 0
        }
        var table = TextTable(["CODE", "KIND", "PRICE", "WINDOW", "REDEEMED", "DISABLED", "STATUS"])
        for code in codes {
            let kind: String
            let price: String
            switch code.kind {
            case .discount(let money): (kind, price) = ("discount", money.description)
            case .unlock: (kind, price) = ("unlock", "-")
            }
            let redeemed = "\(code.redemptions)/" + (code.maxRedemptions.map(String.init) ?? "no cap")
            table.append([code.code, kind, price, code.windowText, redeemed,
                          code.disabledAt.map(OperatorTime.text) ?? "no", code.status(at: now)])
        }
        print(table.render())
        return 0
    }

    // MARK: - disable

    static func disable(_ arguments: [String]) throws -> Int32 {
        let parsed = try OperatorDatabase.reportingRefusals {
            try ParsedArguments(arguments, valueOptions: OperatorDatabase.valueOptions, aliases: OperatorDatabase.aliases)
        }
        guard let code = parsed.positionals.first else { throw UsageError("codes disable needs the CODE to disable") }
        guard parsed.positionals.count == 1 else { throw UsageError("unexpected argument '\(parsed.positionals[1])'") }
        _ = try OperatorDatabase.reportingRefusals { try PromoCode.normalise(code) }
        let (connection, storage) = try OperatorDatabase(parsed).openForChange()
        let now = try OperatorClock.now()
        let disabled = try OperatorDatabase.reportingRefusals {
            try OperatorDatabase.actions(connection, storage).disableCode(code, now: now)
        }
        if let earlier = disabled.before.disabledAt {
            print("code \(disabled.after.code) was already disabled at \(OperatorTime.text(earlier)); nothing changed")
        } else {
            print("disabled code \(disabled.after.code) at \(disabled.after.disabledAt.map(OperatorTime.text) ?? OperatorTime.text(now)) (\(disabled.after.redemptions) redemptions)")
        }
        return 0
    }
}
