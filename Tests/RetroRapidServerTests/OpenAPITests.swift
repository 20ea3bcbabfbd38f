import Foundation
import RetroRapidSupport
import Testing
@testable import RetroRapidServer

/// docs/openapi.json and the router must describe the same API: every route documented,
/// every documented operation routed, and what the document says about sign-in true.
@Suite("OpenAPI document")
struct OpenAPITests {
    static func document() throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: RunningGameServer.openAPIPath))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// "GET /api/v1/devices/{id}" for each documented operation, with whether it needs a token.
    static func documentedOperations() throws -> [String: Bool] {
        let document = try document()
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        let globalSecurity = (document["security"] as? [[String: Any]]) ?? []
        var operations: [String: Bool] = [:]
        for (path, methods) in paths {
            for (method, operation) in methods {
                guard let operation = operation as? [String: Any] else { continue }
                let security = (operation["security"] as? [[String: Any]]) ?? globalSecurity
                operations["\(method.uppercased()) \(path)"] = !security.isEmpty
            }
        }
        return operations
    }

    @Test func everyRouteIsDocumentedAndEveryDocumentedOperationIsRouted() throws {
        let server = try RunningGameServer()
        let routed = Set(server.server.routes.map { "\($0.method.rawValue) \($0.path)" })
        let documented = Set(try Self.documentedOperations().keys)
        #expect(routed.subtracting(documented).sorted() == [], "routes missing from docs/openapi.json")
        #expect(documented.subtracting(routed).sorted() == [], "documented operations no route answers")
        #expect(routed.count >= 20)
    }

    @Test func everyOperationThatNeedsATokenRefusesARequestWithoutOne() throws {
        let server = try RunningGameServer()
        for (operation, signed) in try Self.documentedOperations() where signed {
            let parts = operation.split(separator: " ", maxSplits: 1)
            let path = String(parts[1])
                .replacingOccurrences(of: "{id}", with: "1")
                .replacingOccurrences(of: "{level}", with: "fast")
                .replacingOccurrences(of: "{period}", with: "today")
            let response = try server.request(String(parts[0]), path, json: parts[0] == "GET" || parts[0] == "DELETE" ? nil : "{}")
            #expect(response.status == 401, "\(operation)")
        }
    }

    /// The limit on tokens that sign nobody in answers 429 on every route that takes a token,
    /// and the routes with limits of their own say so too.
    @Test func everyOperationThatALimitCanRefuseDocuments429() throws {
        let document = try Self.document()
        let paths = try #require(document["paths"] as? [String: [String: [String: Any]]])
        let limited = Set(try Self.documentedOperations().filter(\.value).keys)
            .union(["POST /api/v1/players", "POST /api/v1/link-codes/claim"])
        for operation in limited {
            let parts = operation.split(separator: " ", maxSplits: 1).map(String.init)
            let answers = paths[parts[1]]?[parts[0].lowercased()]?["responses"] as? [String: Any]
            #expect(answers?["429"] != nil, "\(operation) does not document 429")
        }
        let server = try RunningGameServer { $0.limits.signInFailures = RateLimit(1, per: .seconds(600)) }
        #expect(try server.request("GET", "/api/v1/me", token: String(repeating: "A", count: 43)).status == 401)
        for operation in try Self.documentedOperations() where operation.value {
            let parts = operation.key.split(separator: " ", maxSplits: 1)
            let path = String(parts[1]).replacingOccurrences(of: "{id}", with: "1")
                .replacingOccurrences(of: "{level}", with: "fast").replacingOccurrences(of: "{period}", with: "today")
            let response = try server.request(String(parts[0]), path, token: String(repeating: "B", count: 43),
                                              json: parts[0] == "GET" || parts[0] == "DELETE" ? nil : "{}",
                                              headers: ["If-Match": "\"1\""])
            #expect(response.status == 429 || response.status == 400, "\(operation.key): \(response.status)")
        }
    }

    @Test func theDocumentIsOpenAPI3WithTheErrorShapeAndBearerAuth() throws {
        let document = try Self.document()
        #expect((document["openapi"] as? String)?.hasPrefix("3.0") == true)
        let components = try #require(document["components"] as? [String: Any])
        let schemes = try #require(components["securitySchemes"] as? [String: [String: Any]])
        #expect(schemes["bearerAuth"]?["scheme"] as? String == "bearer")
        let schemas = try #require(components["schemas"] as? [String: [String: Any]])
        let detail = try #require(schemas["ErrorDetail"]?["properties"] as? [String: Any])
        #expect(Set(detail.keys).isSuperset(of: ["code", "message"]))
        // Every operation says what it answers, and every response it names exists.
        let responses = try #require(components["responses"] as? [String: Any])
        let paths = try #require(document["paths"] as? [String: [String: [String: Any]]])
        for (path, methods) in paths {
            for (method, operation) in methods {
                let answers = try #require(operation["responses"] as? [String: Any], "\(method) \(path)")
                #expect(!answers.isEmpty, "\(method) \(path)")
                for case let reference as [String: String] in answers.values {
                    let name = reference["$ref"]?.split(separator: "/").last.map(String.init) ?? ""
                    #expect(responses[name] != nil, "\(method) \(path) names \(reference)")
                }
            }
        }
    }

    @Test func theServerServesTheDocumentAsItIs() throws {
        let server = try RunningGameServer()
        let response = try server.request("GET", "/api/v1/openapi.json")
        #expect(response.status == 200)
        #expect(response[header: "content-type"] == "application/json")
        #expect(Data(response.body) == (try Data(contentsOf: URL(fileURLWithPath: RunningGameServer.openAPIPath))))
    }
}
