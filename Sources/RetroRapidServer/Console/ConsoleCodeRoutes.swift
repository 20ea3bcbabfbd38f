import Foundation
import RetroRapidDomain

/// The console's promo codes: the list with redemptions and state, create (by the CLI's
/// strength rules: a weak code only when the admin insists, or a random one) and disable,
/// each through `OperatorActions` as `console:NAME`.
enum ConsoleCodeRoutes {
    static func add(to router: inout HTTPRouter, _ gate: ConsoleGate) {
        router.add(.get, "/api/codes") { request, responder in
            gate.run(request, responder, .view) { storage, _, now in
                try APIJSON.response(["codes": try storage.codes.list().map { CodeJSON($0, now: now) }])
            }
        }
        router.add(.post, "/api/codes") { request, responder in
            let body: CreateBody
            let plan: Plan
            do {
                body = try APIJSON.decode(CreateBody.self, from: request, required: true)
                plan = try Plan(body)
            } catch {
                return responder.respond(APIError(error).response)
            }
            gate.run(request, responder, .change) { storage, signedIn, now in
                let created = try ConsoleRoutes.actions(storage, signedIn).createCode(
                    plan.code, kind: plan.kind, startsAt: plan.startsAt, expiresAt: plan.expiresAt,
                    maxRedemptions: body.maxRedemptions, now: now)
                return try APIJSON.response(CodeJSON(created, now: now), status: 201)
            }
        }
        router.add(.post, "/api/codes/{code}/disable") { request, responder in
            let code = request.pathParameters["code"] ?? ""
            gate.run(request, responder, .change) { storage, signedIn, now in
                let change = try ConsoleRoutes.actions(storage, signedIn).disableCode(code, now: now)
                return try APIJSON.response(["changed": change.changed])
            }
        }
    }

    struct CreateBody: APIRequestBody {
        static let fields = ["code", "random", "unlock", "discount", "currency", "startsAt", "expiresAt", "maxRedemptions", "force"]
        let code: String?
        let random: Bool?
        let unlock: Bool?
        /// The price after the discount, as text ("0.99"), with `currency`.
        let discount: String?
        let currency: String?
        /// UTC, `2026-03-01T00:00:00Z`.
        let startsAt: String?
        let expiresAt: String?
        let maxRedemptions: Int?
        /// Create a code the strength rules call easy to guess.
        let force: Bool?
    }

    /// What a create asks for, checked as the CLI checks its arguments; the repository checks
    /// the rest (shape, price range, window, cap) in the write.
    struct Plan {
        let code: String
        let kind: PromoCode.Kind
        let startsAt: Date?
        let expiresAt: Date?

        init(_ body: CreateBody) throws {
            switch (body.code, body.random ?? false) {
            case (nil, true): code = CodeStrength.random()
            case (let given?, false):
                let weaknesses = try CodeStrength.weaknesses(of: given)
                if !weaknesses.isEmpty && !(body.force ?? false) {
                    throw StoreError(.invalid, CodeStrength.explanation(code: try PromoCode.normalise(given), weaknesses), field: "code")
                }
                code = given
            default:
                throw StoreError(.invalid, "Give a code, or ask for a random one, not both.", field: "code")
            }
            switch (body.discount, body.unlock ?? false) {
            case (nil, true):
                guard body.currency == nil else { throw StoreError(.invalid, "An unlock code has no price or currency.", field: "currency") }
                kind = .unlock
            case (let amount?, false):
                guard let currency = body.currency, currency.utf8.count == 3, currency.allSatisfy({ $0.isASCII && $0.isLetter }) else {
                    throw StoreError(.invalid, "A discount needs a three-letter currency such as GBP.", field: "currency")
                }
                guard let price = Money(decimal: amount, currency: currency) else {
                    throw StoreError(.invalid, "The discounted price must be an amount such as 0.99, with at most \(Money.minorUnitDigits(for: currency)) decimals for \(currency.uppercased()).", field: "discount")
                }
                kind = .discount(price)
            default:
                throw StoreError(.invalid, "Say what the code does: a discounted price, or unlock.", field: "unlock")
            }
            func time(_ text: String?, _ field: String) throws -> Date? {
                guard let text, !text.isEmpty else { return nil }
                guard let date = UTCCivilTime.parse(text) else {
                    throw StoreError(.invalid, "Give the time in UTC as 2026-03-01T00:00:00Z.", field: field)
                }
                return date
            }
            startsAt = try time(body.startsAt, "startsAt")
            expiresAt = try time(body.expiresAt, "expiresAt")
        }
    }

    struct CodeJSON: Encodable {
        let code: String
        /// `K7Q4-M2XD-9P3R`: how to read it out.
        let grouped: String
        let kind: String
        let window: String
        let redemptions: Int
        let maxRedemptions: Int?
        let status: String
        let disabledAt: Date?
        let createdAt: Date

        init(_ code: PromoCode, now: Date) {
            self.code = code.code
            grouped = CodeStrength.grouped(code.code)
            kind = code.kindText
            window = code.windowText
            redemptions = code.redemptions
            maxRedemptions = code.maxRedemptions
            status = code.status(at: now)
            disabledAt = code.disabledAt
            createdAt = code.createdAt
        }
    }
}
