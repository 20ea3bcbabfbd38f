#if canImport(FoundationNetworking)
import FoundationNetworking  // URLSession on Linux: swift-corelibs-foundation over libcurl (Debian's libcurl4)
#endif
import Foundation
import RetroRapidDomain
import RetroRapidSupport

/// Why the provider did not open a checkout session: the purchase answers 502 with this
/// message and stores nothing.
struct CheckoutError: Error, Sendable, Equatable {
    let message: String

    var apiError: APIError {
        APIError(status: 502, code: "payment_provider_error", message: message)
    }
}

/// Opens checkout sessions at the payment provider (`CheckoutSessionForm`'s request) over
/// HTTPS with Foundation's `URLSession`.
///
/// Threading rule: `createSession` returns at once; the call runs on URLSession's own threads
/// (network I/O never on the service thread, never on the storage thread) and `completion`
/// runs on one of them, bounded by `timeout`. Callers hand the result back to the service
/// thread through the `DatabaseWorker` (which posts its completion to the service mailbox).
final class CheckoutClient: Sendable {
    let baseURL: String
    let publicBaseURL: String
    private let secretKey: String
    private let session: URLSession

    /// nil when the configuration sells nothing (no secret key).
    init?(_ configuration: ServerConfiguration) {
        guard let key = configuration.paymentSecretKey, let publicBaseURL = configuration.publicBaseURL else { return nil }
        baseURL = configuration.paymentProviderURL
        self.publicBaseURL = publicBaseURL
        secretKey = key
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        sessionConfiguration.timeoutIntervalForRequest = TimeInterval(configuration.paymentTimeoutSeconds)
        sessionConfiguration.timeoutIntervalForResource = TimeInterval(configuration.paymentTimeoutSeconds)
        sessionConfiguration.httpShouldSetCookies = false
        session = URLSession(configuration: sessionConfiguration)
    }

    /// Opens a session for the order; `completion` gets it or the reason it failed.
    func createSession(orderID: String, amount: Money,
                       completion: @escaping @Sendable (Result<Order.Checkout, CheckoutError>) -> Void) {
        guard let url = URL(string: baseURL + "/v1/checkout/sessions") else {
            return completion(.failure(CheckoutError(message: "The payment provider's URL is not usable; the operator must fix it.")))
        }
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue("Bearer \(secretKey)", forHTTPHeaderField: "Authorization")
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        // Stripe's idempotency key: a retried request opens no second session for the order.
        request.setValue(orderID, forHTTPHeaderField: "Idempotency-Key")
        request.httpBody = Data(CheckoutSessionForm.encode(
            CheckoutSessionForm.fields(orderID: orderID, amount: amount, publicBaseURL: publicBaseURL)).utf8)
        session.dataTask(with: request) { data, response, error in
            completion(Self.result(data: data, response: response, error: error))
        }.resume()
    }

    /// Asks the provider to close a session's page (Stripe's `POST /v1/checkout/sessions/{id}/expire`)
    /// so a cancelled order cannot be paid there any more. `completion` gets nil on success, or
    /// why not (the page then stays open until it expires; a payment made on it still pays).
    func expireSession(_ sessionID: String, completion: @escaping @Sendable (CheckoutError?) -> Void) {
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "_"))
        guard sessionID.unicodeScalars.allSatisfy(allowed.contains),
              let url = URL(string: baseURL + "/v1/checkout/sessions/\(sessionID)/expire") else {
            return completion(CheckoutError(message: "The checkout session id is not one the provider gives."))
        }
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue("Bearer \(secretKey)", forHTTPHeaderField: "Authorization")
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data()
        session.dataTask(with: request) { data, response, error in
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            if error == nil, (200..<300).contains(status) { return completion(nil) }
            let reason = data.flatMap(CheckoutSessionForm.refusal(from:))?.message ?? error.map { "\($0)" } ?? "HTTP \(status)"
            completion(CheckoutError(message: reason))
        }.resume()
    }

    static func result(data: Data?, response: URLResponse?, error: (any Error)?) -> Result<Order.Checkout, CheckoutError> {
        if let error {
            let timedOut = (error as? URLError)?.code == .timedOut
            return .failure(CheckoutError(message: timedOut
                ? "The payment provider did not answer in time; nothing was charged. Try again in a moment."
                : "The payment provider could not be reached; nothing was charged. Try again in a moment."))
        }
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        let body = data ?? Data()
        guard (200..<300).contains(status) else {
            let refusal = CheckoutSessionForm.refusal(from: body)
            let reason = refusal.map { $0.type == "authentication_error" || status == 401
                ? "the server's payment key was refused (\($0.message)); the operator must fix it" : $0.message }
                ?? "it answered HTTP \(status)"
            return .failure(CheckoutError(message: "The payment provider would not open a checkout: \(reason). Nothing was charged."))
        }
        guard let checkout = CheckoutSessionForm.session(from: body) else {
            return .failure(CheckoutError(message: "The payment provider's answer had no checkout page; nothing was charged."))
        }
        return .success(checkout)
    }
}
