import Foundation
import RetroRapidRules
import RetroRapidDomain
import RetroRapidSQL
import RetroRapidSQLite
import RetroRapidSupport
import Testing
@testable import RetroRapidServer

/// A whole `GameServer` on 127.0.0.1 and a kernel-chosen port, with a real SQLite file in a
/// temporary folder and a temporary web root, spoken to over real HTTP.
final class RunningGameServer {
    static let webhookSecret = "whsec_test_0123456789"
    /// docs/openapi.json of this checkout.
    static let openAPIPath = URL(fileURLWithPath: TemporaryDataFolder.migrationsPath)
        .deletingLastPathComponent().appendingPathComponent("docs/openapi.json").path

    let data: TemporaryDataFolder
    let webRoot: TemporaryWebRoot
    let server: GameServer
    let logs = InMemoryLogSink()
    let port: Int

    init(configure: (inout GameServer.Options) -> Void = { _ in },
         components: @escaping (ServerComponentContext) -> [any ServerComponent] = GameServer.defaultComponents) throws {
        data = try TemporaryDataFolder()
        webRoot = try TemporaryWebRoot()
        var configuration = data.configuration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.webRoot = webRoot.url.path
        configuration.webhookSecret = Self.webhookSecret
        var options = GameServer.Options(configuration: configuration)
        options.openAPIPath = Self.openAPIPath
        configure(&options)
        server = try GameServer(options: options, logger: Logger(label: "test", logLevel: .debug, sink: logs),
                                components: components)
        try server.start()
        port = server.boundPort!
    }

    deinit {
        server.stop()
    }

    var databasePath: String { server.options.configuration.databasePath }

    /// One request on a fresh connection. `json` is sent as the body with
    /// `Content-Type: application/json` unless `headers` names another.
    func request(_ method: String, _ path: String, token: String? = nil, json: String? = nil,
                 headers: [String: String] = [:]) throws -> TestHTTPResponse {
        var headers = headers
        if let token { headers["Authorization"] = "Bearer \(token)" }
        if json != nil && !headers.keys.contains(where: { $0.lowercased() == "content-type" }) {
            headers["Content-Type"] = "application/json"
        }
        return try TestHTTPConnection(port: port).request(method, path, headers: headers, body: Array((json ?? "").utf8))
    }

    /// A new player through the API: their token and public id.
    func createPlayer(_ name: String? = nil, device: String = "test device") throws -> (token: String, id: String) {
        var body: [String: String] = ["deviceLabel": device]
        if let name { body["displayName"] = name }
        let response = try request("POST", "/api/v1/players", json: Self.json(body))
        try #require(response.status == 201, "creating a player answered \(response.status): \(response.text)")
        let object = try #require(response.json)
        let player = try #require(object["player"] as? [String: Any])
        return (try #require(object["token"] as? String), try #require(player["id"] as? String))
    }

    /// A second connection to the server's database file, for setting up what only the
    /// operator can do (codes) and checking what was stored. WAL lets it work alongside the
    /// storage thread.
    func database() throws -> Database {
        try Database(path: databasePath)
    }

    func playerRowID(publicID: String) throws -> Int64 {
        try SQLPlayerRepository(executor: SQLiteExecutor(database: database())).player(publicID: publicID).id
    }

    func count(_ table: String) throws -> Int {
        try database().prepare("SELECT count(*) FROM \(table)").query { $0.int(at: 0) }.first ?? -1
    }

    static func json(_ object: Any) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }
}

extension TestHTTPResponse {
    /// `error.code` of an API error body.
    var errorCode: String? {
        (json?["error"] as? [String: Any])?["code"] as? String
    }

    var errorMessage: String? {
        (json?["error"] as? [String: Any])?["message"] as? String
    }
}
