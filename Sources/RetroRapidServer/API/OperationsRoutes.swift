import Foundation

/// What the operator and their tools read: `/healthz` for load balancers, `/metrics` for
/// Prometheus, and the API's own description at `/api/v1/openapi.json`.
enum OperationsRoutes {
    /// - Parameters:
    ///   - isStopping: true once a graceful stop began; /healthz then answers 503 so a load
    ///     balancer sends new players elsewhere.
    ///   - openAPI: the bytes of docs/openapi.json, read at startup; nil when it was missing.
    static func add(to router: inout HTTPRouter, metrics: Metrics?, openAPI: [UInt8]?,
                    isStopping: @escaping @Sendable () -> Bool) {
        router.add(.get, "/healthz") { _ in
            isStopping() ? .json(status: 503, #"{"status":"stopping"}"#) : .json(#"{"status":"ok"}"#)
        }
        if let metrics {
            router.add(.get, "/metrics") { request in
                // Prometheus scrapes each node directly. A request with X-Forwarded-For came
                // through a proxy, from the internet, whatever spelling of the path got it
                // past the proxy's rules: it gets the page any unknown path gets.
                guard request[header: "x-forwarded-for"] == nil else { return HTTPRouter.pageNotFound }
                return HTTPResponse(status: 200, contentType: "text/plain; version=0.0.4; charset=utf-8",
                             headers: [HTTPHeader("cache-control", "no-store")], body: Array(metrics.render().utf8))
            }
        }
        router.add(.get, "/api/v1/openapi.json") { _ in
            guard let openAPI else {
                return APIError(status: 404, code: "not_found",
                                message: "This server was started without its OpenAPI document (docs/openapi.json).").response
            }
            return HTTPResponse(status: 200, contentType: "application/json",
                                headers: [HTTPHeader("cache-control", "no-cache")], body: openAPI)
        }
    }
}
