import Foundation
import RetroRapidDomain

/// The console's orders: the latest, filtered by state; one with the provider's events for it;
/// mark one paid (as `retrorapid orders mark-paid`, through `OperatorActions`).
enum ConsoleOrderRoutes {
    static func add(to router: inout HTTPRouter, _ gate: ConsoleGate) {
        router.add(.get, "/api/orders") { request, responder in
            let status: Order.Status?
            do {
                switch request.query("status") ?? "" {
                case "": status = nil
                case let text:
                    guard let known = Order.Status(rawValue: text) else {
                        throw APIError.invalid("'status' is pending, paid or cancelled, or absent for every order.", field: "status")
                    }
                    status = known
                }
            } catch {
                return responder.respond(APIError(error).response)
            }
            gate.run(request, responder, .view) { storage, _, _ in
                let orders = try storage.orders.latest(status: status, limit: 100)
                var players: [Int64: Player] = [:]
                return try APIJSON.response(["orders": try orders.map { order in
                    if players[order.playerID] == nil { players[order.playerID] = try storage.players.player(id: order.playerID) }
                    return OrderJSON(order, player: players[order.playerID])
                }])
            }
        }
        router.add(.get, "/api/orders/{id}") { request, responder in
            let orderID = request.pathParameters["id"] ?? ""
            gate.run(request, responder, .view) { storage, _, _ in
                try APIJSON.response(try OrderDetailJSON(orderID, storage: storage))
            }
        }
        router.add(.post, "/api/orders/{id}/mark-paid") { request, responder in
            let orderID = request.pathParameters["id"] ?? ""
            let body: ConsoleRoutes.ReasonBody
            do { body = try APIJSON.decode(ConsoleRoutes.ReasonBody.self, from: request, required: true) } catch {
                return responder.respond(APIError(error).response)
            }
            gate.run(request, responder, .change) { storage, signedIn, now in
                let change = try ConsoleRoutes.actions(storage, signedIn).markPaid(orderID: orderID, reason: body.reason, now: now)
                return try APIJSON.response(MarkedJSON(changed: change.changed, order: try OrderDetailJSON(orderID, storage: storage)))
            }
        }
    }

    struct OrderJSON: Encodable {
        let id: String
        let playerID: String?
        let playerName: String?
        let status: String
        let amount: String
        let discountCode: String?
        let createdAt: Date
        let paidAt: Date?
        /// The provider's event, or the operator's note ("operator: …"), that paid it.
        let paidBy: String?

        init(_ order: Order, player: Player?) {
            id = order.publicID
            playerID = player?.publicID
            playerName = player?.displayName
            status = order.status.rawValue
            amount = order.amount.description
            discountCode = order.discountCode
            createdAt = order.createdAt
            paidAt = order.paidAt
            paidBy = order.providerEventID
        }
    }

    struct OrderDetailJSON: Encodable {
        struct EventJSON: Encodable {
            let id: String
            let type: String
            let receivedAt: Date
        }
        let order: OrderJSON
        let events: [EventJSON]

        init(_ orderID: String, storage: StorageContext) throws {
            let order = try storage.orders.order(publicID: orderID)
            self.order = OrderJSON(order, player: try storage.players.player(id: order.playerID))
            events = try storage.paymentEvents.events(orderID: orderID).map {
                EventJSON(id: $0.eventID, type: $0.type, receivedAt: $0.receivedAt)
            }
        }
    }

    struct MarkedJSON: Encodable {
        let changed: Bool
        let order: OrderDetailJSON
    }
}
