import Foundation
import RetroRapidDomain
import RetroRapidStorageFixtures
import Testing

/// The payment provider's signed webhook over `PaymentEventRepository` (with the orders and
/// entitlements it pays and grants), run against every backend in `StorageBackends.all`.
@Suite struct PaymentEventRepositoryContractTests {
    static let secret = "whsec_test"
    static let now = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01T00:00:00Z

    /// A store with one player and one pending order, opened with checkout session `cs_test_1`.
    struct Shop {
        let store: StoreUnderTest
        let repositories: StorageRepositories
        let player: Int64
        let order: Order
        let webhook: PaymentWebhook

        init(_ store: StoreUnderTest) throws {
            self.store = store
            repositories = store.repositories()
            player = try store.addPlayer("p1")
            let now = PaymentEventRepositoryContractTests.now
            let price = try repositories.orders.priceDue(playerID: player, now: now)
            let checkout = Order.Checkout(sessionID: "cs_test_1", url: "https://pay.example/cs_test_1", expiresAt: nil)
            guard case .created(let created) = try repositories.orders.createOrder(
                publicID: Order.newPublicID(), playerID: player, amount: price.amount, discountCode: nil, checkout: checkout, now: now)
            else { throw StoreError(.conflict, "the shop's order was not created", field: "order") }
            order = created
            webhook = PaymentWebhook(events: repositories.paymentEvents, secret: PaymentEventRepositoryContractTests.secret)
        }

        func paidEvent(_ id: String, order: String? = nil) -> [UInt8] {
            Array(#"{"id":"\#(id)","type":"order.paid","order":"\#(order ?? self.order.publicID)"}"#.utf8)
        }

        func orderStatus() throws -> Order.Status {
            try repositories.orders.order(publicID: order.publicID).status
        }

        /// The event `body` is recorded: sending it again is `.alreadyHandled` and changes nothing.
        func isRecorded(_ body: [UInt8], id: String) throws -> Bool {
            let before = try store.dump()
            let again = try webhook.handle(body: body, signatureHeader: PaymentEventRepositoryContractTests.signed(body), now: PaymentEventRepositoryContractTests.now)
            let after = try store.dump()
            return again == .alreadyHandled(eventID: id) && after == before
        }
    }

    static func signed(_ body: [UInt8], at time: Date = now, secret: String = secret) -> String {
        PaymentWebhook.signatureHeader(body: body, secret: Array(secret.utf8), timestamp: time)
    }

    /// Stripe's event for a finished checkout, as the provider sends it: by default the shop's
    /// session, for its price (£2.99). A nil amount or currency leaves the field out.
    static func sessionEvent(_ id: String, type: String = PaymentWebhook.sessionCompletedType, order: String,
                             paymentStatus: String = "paid", session: String = "cs_test_1",
                             amount: String? = "299", currency: String? = "gbp") -> [UInt8] {
        let money = (amount.map { #","amount_total":\#($0)"# } ?? "") + (currency.map { #","currency":"\#($0)""# } ?? "")
        return Array(#"{"id":"\#(id)","object":"event","type":"\#(type)","data":{"object":{"id":"\#(session)","object":"checkout.session","client_reference_id":"\#(order)"\#(money),"payment_status":"\#(paymentStatus)","metadata":{"order":"\#(order)"}}}}"#.utf8)
    }

    @Test(arguments: StorageBackends.all) func aCorrectlySignedEventPaysTheOrderAndGrantsUnlimitedPlay(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let shop = try Shop(store)
            let body = shop.paidEvent("evt_1")
            let outcome = try shop.webhook.handle(body: body, signatureHeader: Self.signed(body), now: Self.now.addingTimeInterval(5))
            guard case .paid(let order) = outcome else {
                Issue.record("expected .paid, got \(outcome)")
                return
            }
            #expect(order.publicID == shop.order.publicID && order.status == .paid && order.providerEventID == "evt_1")
            #expect(try shop.orderStatus() == .paid)
            #expect(try shop.repositories.entitlements.unlimited(playerID: shop.player)?.reference == shop.order.publicID)
            #expect(try shop.isRecorded(body, id: "evt_1"))
        }
    }

    @Test(arguments: StorageBackends.all) func stripesCompletedCheckoutPaysTheOrderItsClientReferenceNames(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let shop = try Shop(store)
            let unpaid = Self.sessionEvent("evt_u", order: shop.order.publicID, paymentStatus: "unpaid")
            #expect(try shop.webhook.handle(body: unpaid, signatureHeader: Self.signed(unpaid), now: Self.now)
                == .ignored(eventID: "evt_u", type: PaymentWebhook.sessionCompletedType))
            #expect(try shop.orderStatus() == .pending)
            let expired = Self.sessionEvent("evt_x", type: "checkout.session.expired", order: shop.order.publicID, paymentStatus: "unpaid")
            #expect(try shop.webhook.handle(body: expired, signatureHeader: Self.signed(expired), now: Self.now)
                == .ignored(eventID: "evt_x", type: "checkout.session.expired"))
            let paid = Self.sessionEvent("evt_p", order: shop.order.publicID)
            guard case .paid(let order) = try shop.webhook.handle(body: paid, signatureHeader: Self.signed(paid), now: Self.now) else {
                Issue.record("expected .paid")
                return
            }
            #expect(order.status == .paid && order.providerEventID == "evt_p")
            #expect(try shop.repositories.entitlements.unlimited(playerID: shop.player) != nil)
        }
    }

    @Test(arguments: StorageBackends.all) func aSessionThatIsNotTheOrdersOwnPaysNothingAndIsRecordedAsRefused(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let shop = try Shop(store)
            let id = shop.order.publicID
            let async = PaymentWebhook.asyncPaymentSucceededType
            let refused: [(String, [UInt8])] = [
                ("evt_session", Self.sessionEvent("evt_session", order: id, session: "cs_test_someone_elses")),
                ("evt_cheap", Self.sessionEvent("evt_cheap", order: id, amount: "1")),
                ("evt_dear", Self.sessionEvent("evt_dear", order: id, amount: "29900")),
                ("evt_currency", Self.sessionEvent("evt_currency", order: id, currency: "usd")),
                ("evt_no_amount", Self.sessionEvent("evt_no_amount", order: id, amount: nil)),
                ("evt_no_currency", Self.sessionEvent("evt_no_currency", order: id, currency: nil)),
                ("evt_async", Self.sessionEvent("evt_async", type: async, order: id, session: "cs_test_someone_elses")),
            ]
            for (eventID, body) in refused {
                let outcome = try shop.webhook.handle(body: body, signatureHeader: Self.signed(body), now: Self.now)
                guard case .refused(eventID, id, let reason) = outcome else {
                    Issue.record("\(eventID): expected .refused, got \(outcome)")
                    continue
                }
                #expect(reason.contains(id), "\(reason)")
                #expect(try shop.orderStatus() == .pending, "\(eventID)")
                #expect(try shop.repositories.entitlements.hasUnlimited(playerID: shop.player) == false, "\(eventID)")
                #expect(try shop.isRecorded(body, id: eventID), "\(eventID)")
            }
            // The order's own session, for its price, still pays it; the currency in any case.
            let own = Self.sessionEvent("evt_own", order: id, currency: "GBP")
            guard case .paid(let order) = try shop.webhook.handle(body: own, signatureHeader: Self.signed(own), now: Self.now) else {
                Issue.record("expected .paid")
                return
            }
            #expect(order.status == .paid && order.providerEventID == "evt_own")
        }
    }

    @Test(arguments: StorageBackends.all) func noSessionPaysAnOrderThatOpenedNone(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let shop = try Shop(store)
            let other = try store.addPlayer("p2")
            let bare = try shop.repositories.orders.createOrder(playerID: other, now: Self.now)
            let body = Self.sessionEvent("evt_bare", order: bare.publicID)
            guard case .refused = try shop.webhook.handle(body: body, signatureHeader: Self.signed(body), now: Self.now) else {
                Issue.record("expected .refused")
                return
            }
            #expect(try shop.repositories.orders.order(publicID: bare.publicID).status == .pending)
            #expect(try shop.repositories.entitlements.hasUnlimited(playerID: other) == false)
        }
    }

    @Test(arguments: StorageBackends.all) func aPaidCheckoutWithoutAnOrderIsRefusedAndRecordsNothing(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let shop = try Shop(store)
            let before = try store.dump()
            let body = Array(#"{"id":"evt_n","type":"checkout.session.completed","data":{"object":{"id":"cs_1","payment_status":"paid"}}}"#.utf8)
            #expect(throws: StoreError.self) { try shop.webhook.handle(body: body, signatureHeader: Self.signed(body), now: Self.now) }
            #expect(try store.dump() == before)
        }
    }

    @Test(arguments: StorageBackends.all) func aLatePaymentPaysACancelledOrderAndKeepsWhenItWasCancelled(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let shop = try Shop(store)
            let orders = shop.repositories.orders
            #expect(try orders.cancel(publicID: shop.order.publicID, playerID: shop.player, now: Self.now).status == .cancelled)
            let paid = Self.sessionEvent("evt_late", type: PaymentWebhook.asyncPaymentSucceededType, order: shop.order.publicID)
            guard case .paid(let order) = try shop.webhook.handle(body: paid, signatureHeader: Self.signed(paid), now: Self.now) else {
                Issue.record("expected .paid")
                return
            }
            #expect(order.status == .paid && order.cancelledAt == Self.now)
        }
    }

    @Test(arguments: StorageBackends.all) func aReplayedEventIDDoesNothingTwice(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let shop = try Shop(store)
            let body = shop.paidEvent("evt_1")
            try shop.webhook.handle(body: body, signatureHeader: Self.signed(body), now: Self.now)
            let afterFirst = try store.dump()
            let granted = try shop.repositories.entitlements.unlimited(playerID: shop.player)

            // The same request again, and the provider's retry signed a minute later.
            #expect(try shop.webhook.handle(body: body, signatureHeader: Self.signed(body), now: Self.now) == .alreadyHandled(eventID: "evt_1"))
            let later = Self.now.addingTimeInterval(60)
            #expect(try shop.webhook.handle(body: body, signatureHeader: Self.signed(body, at: later), now: later) == .alreadyHandled(eventID: "evt_1"))
            #expect(try store.dump() == afterFirst)

            // Another event for the paid order is recorded; the order keeps its first event.
            let second = shop.paidEvent("evt_2")
            guard case .paid(let order) = try shop.webhook.handle(body: second, signatureHeader: Self.signed(second), now: Self.now) else {
                Issue.record("expected .paid")
                return
            }
            #expect(order.providerEventID == "evt_1")
            #expect(try shop.isRecorded(body, id: "evt_1"))
            #expect(try shop.isRecorded(second, id: "evt_2"))
            // Still the one grant, from the first payment.
            #expect(granted != nil)
            #expect(try shop.repositories.entitlements.unlimited(playerID: shop.player) == granted)
        }
    }

    @Test(arguments: StorageBackends.all) func badSignaturesStaleTimestampsAndMalformedHeadersAreUnauthorizedAndChangeNothing(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let shop = try Shop(store)
            let body = shop.paidEvent("evt_1")
            let good = Self.signed(body)
            let goodHex = String(good.split(separator: "=").last!)
            let cases: [(String, String?, Date)] = [
                ("wrong secret", Self.signed(body, secret: "whsec_other"), Self.now),
                ("signed for another body", Self.signed(shop.paidEvent("evt_2")), Self.now),
                ("signature with a flipped digit", "t=1767225600,v1=" + (goodHex.first == "0" ? "1" : "0") + goodHex.dropFirst(), Self.now),
                ("signature over another timestamp", "t=1767225601,v1=\(goodHex)", Self.now),
                ("signed 301 s ago", Self.signed(body, at: Self.now.addingTimeInterval(-301)), Self.now),
                ("signed 301 s ahead", Self.signed(body, at: Self.now.addingTimeInterval(301)), Self.now),
                ("no header", nil, Self.now),
                ("empty header", "", Self.now),
                ("no timestamp", "v1=\(goodHex)", Self.now),
                ("no signature", "t=1767225600", Self.now),
                ("two timestamps", "t=1767225600,t=1767225600,v1=\(goodHex)", Self.now),
                ("timestamp not digits", "t=+1767225600,v1=\(goodHex)", Self.now),
                ("timestamp overflows", "t=99999999999999999999,v1=\(goodHex)", Self.now),
                ("garbage", "garbage", Self.now),
                ("signature not hex", "t=1767225600,v1=zz", Self.now),
            ]
            let before = try store.dump()
            for (name, header, now) in cases {
                let error = #expect(throws: StoreError.self, "\(name)") { try shop.webhook.handle(body: body, signatureHeader: header, now: now) }
                #expect(error?.code == .unauthorized, "\(name)")
                #expect(try store.dump() == before, "\(name) changed the store")
            }
            #expect(try shop.orderStatus() == .pending)

            // Without a configured secret nothing verifies, not even a header signed with "".
            let unconfigured = PaymentWebhook(events: shop.repositories.paymentEvents, secret: "")
            let error = #expect(throws: StoreError.self) { try unconfigured.handle(body: body, signatureHeader: Self.signed(body, secret: ""), now: Self.now) }
            #expect(error?.code == .unauthorized)
            #expect(try store.dump() == before)
        }
    }

    @Test(arguments: StorageBackends.all) func theToleranceHoldsBothWaysToTheSecond(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let shop = try Shop(store)
            let old = shop.paidEvent("evt_old")
            #expect(try shop.webhook.handle(body: old, signatureHeader: Self.signed(old, at: Self.now.addingTimeInterval(-300)), now: Self.now) != .alreadyHandled(eventID: "evt_old"))
            let ahead = shop.paidEvent("evt_ahead")
            #expect(try shop.webhook.handle(body: ahead, signatureHeader: Self.signed(ahead, at: Self.now.addingTimeInterval(300)), now: Self.now) != .alreadyHandled(eventID: "evt_ahead"))
            // Both were accepted and recorded.
            #expect(try shop.isRecorded(old, id: "evt_old"))
            #expect(try shop.isRecorded(ahead, id: "evt_ahead"))

            let strict = PaymentWebhook(events: shop.repositories.paymentEvents, secret: Self.secret, tolerance: 10)
            let late = shop.paidEvent("evt_late")
            #expect((#expect(throws: StoreError.self) { try strict.handle(body: late, signatureHeader: Self.signed(late, at: Self.now.addingTimeInterval(-11)), now: Self.now) })?.code == .unauthorized)
        }
    }

    @Test(arguments: StorageBackends.all) func anyMatchingSignatureOfSeveralIsAcceptedInEitherCase(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let shop = try Shop(store)
            let body = shop.paidEvent("evt_1")
            let hex = String(Self.signed(body).split(separator: "=").last!)
            let rotated = "t=1767225600, v0=ignored, v1=\(String(repeating: "0", count: 64)), v1=\(hex.uppercased())"
            #expect(try shop.webhook.handle(body: body, signatureHeader: rotated, now: Self.now) != .alreadyHandled(eventID: "evt_1"))
            #expect(try shop.orderStatus() == .paid)
        }
    }

    @Test(arguments: StorageBackends.all) func malformedBodiesAreInvalidAndUnknownOrdersNotFoundAndBothChangeNothing(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let shop = try Shop(store)
            let before = try store.dump()
            let malformed = [
                "not json",
                "[]",
                #"{"type":"order.paid","order":"ord_x"}"#,
                #"{"id":"","type":"order.paid","order":"ord_x"}"#,
                #"{"id":"evt_1","order":"ord_x"}"#,
                #"{"id":"evt_1","type":"order.paid"}"#,
                #"{"id":"evt_1","type":"order.paid","order":""}"#,
                #"{"id":42,"type":"order.paid","order":"ord_x"}"#,
            ]
            for text in malformed {
                let body = Array(text.utf8)
                let error = #expect(throws: StoreError.self, "\(text)") { try shop.webhook.handle(body: body, signatureHeader: Self.signed(body), now: Self.now) }
                #expect(error?.code == .invalid, "\(text)")
                #expect(try store.dump() == before, "\(text) changed the store")
            }

            let unknown = shop.paidEvent("evt_1", order: "ord_nosuchorder")
            let error = #expect(throws: StoreError.self) { try shop.webhook.handle(body: unknown, signatureHeader: Self.signed(unknown), now: Self.now) }
            #expect(error?.code == .notFound)
            #expect(try store.dump() == before)

            // The event was not recorded, so the same id can still pay a real order.
            let real = shop.paidEvent("evt_1")
            #expect(try shop.webhook.handle(body: real, signatureHeader: Self.signed(real), now: Self.now) != .alreadyHandled(eventID: "evt_1"))
            #expect(try shop.orderStatus() == .paid)
        }
    }

    @Test(arguments: StorageBackends.all) func otherEventTypesAreRecordedAndIgnored(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let shop = try Shop(store)
            let body = Array(#"{"id":"evt_r","type":"order.refunded","order":"\#(shop.order.publicID)","extra":{"a":1}}"#.utf8)
            #expect(try shop.webhook.handle(body: body, signatureHeader: Self.signed(body), now: Self.now) == .ignored(eventID: "evt_r", type: "order.refunded"))
            #expect(try shop.webhook.handle(body: body, signatureHeader: Self.signed(body), now: Self.now) == .alreadyHandled(eventID: "evt_r"))
            #expect(try shop.isRecorded(body, id: "evt_r"))
            #expect(try shop.orderStatus() == .pending)
            #expect(try shop.repositories.entitlements.hasUnlimited(playerID: shop.player) == false)
        }
    }
}
