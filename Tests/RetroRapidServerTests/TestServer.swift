import Foundation
@testable import RetroRapidServer

/// A temporary web root with the given files (relative path -> contents), removed on deinit.
final class TemporaryWebRoot {
    let url: URL

    init(files: [String: String] = TemporaryWebRoot.sampleClient) throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("retrorapid-web-\(UUID().uuidString)", isDirectory: true)
        for (path, contents) in files {
            let file = url.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(),
                                                    withIntermediateDirectories: true)
            try Data(contents.utf8).write(to: file)
        }
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    static let sampleClient: [String: String] = [
        "index.html": """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>Test</title>
            <script type="module" src="app.js"></script></head>
            <body><main><h1>Test client</h1></main></body></html>
            """,
        "app.js": "export const answer = 42;\n",
    ]
}

/// A real server on 127.0.0.1 and a kernel-chosen port, serving a temporary web root.
final class RunningTestServer {
    let webRoot: TemporaryWebRoot
    let server: HTTPServer
    let port: Int

    init(files: [String: String] = TemporaryWebRoot.sampleClient, router: HTTPRouter = .standard) throws {
        webRoot = try TemporaryWebRoot(files: files)
        server = HTTPServer(
            configuration: HTTPServerOptions(host: "127.0.0.1", port: 0, webRoot: webRoot.url.path),
            router: router)
        try server.start()
        port = server.boundPort!
    }

    deinit {
        server.stop()
    }

    func get(_ path: String, headers: [String: String] = [:]) throws -> TestHTTPResponse {
        try TestHTTPConnection.get(path, port: port, headers: headers)
    }
}
