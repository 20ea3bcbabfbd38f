import Foundation
import Testing
@testable import RetroRapidServer

@Suite("Static files")
struct StaticFilesTests {
    @Test func indexIsServedAtTheRootWithAStrictContentSecurityPolicy() throws {
        let server = try RunningTestServer()
        let response = try server.get("/")

        #expect(response.status == 200)
        #expect(response[header: "content-type"]?.hasPrefix("text/html") == true)
        #expect(response.text.contains("<h1>Test client</h1>"))
        let policy = try #require(response[header: "content-security-policy"])
        #expect(policy.contains("default-src 'none'"))
        #expect(policy.contains("script-src 'self'"))
        #expect(policy.contains("style-src 'self'"))
        #expect(!policy.contains("unsafe-inline"))
        #expect(!policy.contains("unsafe-eval"))
        #expect(response[header: "x-content-type-options"] == "nosniff")
        #expect(response[header: "referrer-policy"] == "no-referrer")
    }

    static let contentTypes: [(file: String, type: String)] = [
        ("index.html", "text/html"),
        ("app.js", "text/javascript"),
        ("game.mjs", "text/javascript"),
        ("style.css", "text/css"),
        ("strings.json", "application/json"),
        ("logo.svg", "image/svg+xml"),
        ("logo.png", "image/png"),
        ("lcd.woff2", "font/woff2"),
        ("lcd.ttf", "font/ttf"),
        ("favicon.ico", "image/x-icon"),
        ("robots.txt", "text/plain"),
        ("app.webmanifest", "application/manifest+json"),
    ]

    @Test func eachClientFileTypeIsServedWithItsContentType() throws {
        var files: [String: String] = [:]
        for entry in Self.contentTypes { files[entry.file] = "contents of \(entry.file)" }
        let server = try RunningTestServer(files: files)

        for entry in Self.contentTypes {
            let response = try server.get("/" + entry.file)
            #expect(response.status == 200, "\(entry.file)")
            #expect(response[header: "content-type"] == entry.type, "\(entry.file)")
            #expect(response.text == "contents of \(entry.file)", "\(entry.file)")
        }
    }

    @Test func aFileTypeWithNoKnownContentTypeIsRefused() throws {
        let server = try RunningTestServer(files: ["index.html": "<p>x</p>", "notes.bak": "old"])
        let response = try server.get("/notes.bak")
        #expect(response.status == 415)
        #expect(!response.text.contains("old"))
    }

    @Test func aMatchingIfNoneMatchGets304WithoutTheBody() throws {
        let server = try RunningTestServer()
        let first = try server.get("/app.js")
        let etag = try #require(first[header: "etag"])
        #expect(first[header: "cache-control"]?.contains("must-revalidate") == true)

        let revalidated = try server.get("/app.js", headers: ["If-None-Match": etag])
        #expect(revalidated.status == 304)
        #expect(revalidated.body.isEmpty)
        #expect(revalidated[header: "etag"] == etag)
        #expect(revalidated[header: "content-security-policy"] != nil)

        let stale = try server.get("/app.js", headers: ["If-None-Match": "not-the-tag"])
        #expect(stale.status == 200)
        #expect(stale.text == TemporaryWebRoot.sampleClient["app.js"])
    }

    @Test func aMissingFileGets404Page() throws {
        let server = try RunningTestServer()
        for path in ["/missing.js", "/no/such/folder/page.html"] {
            let response = try server.get(path)
            #expect(response.status == 404, "\(path)")
            #expect(response[header: "content-type"]?.hasPrefix("text/html") == true, "\(path)")
            #expect(response.text.contains("<h1>Page not found</h1>"), "\(path)")
            #expect(response[header: "content-security-policy"] != nil, "\(path)")
        }
    }

    @Test func pathsCannotLeaveTheWebRoot() throws {
        let server = try RunningTestServer()
        let secretName = "retrorapid-secret-\(UUID().uuidString).txt"
        let secret = server.webRoot.url.deletingLastPathComponent().appendingPathComponent(secretName)
        try Data("TOP SECRET".utf8).write(to: secret)
        defer { try? FileManager.default.removeItem(at: secret) }

        for path in ["/../\(secretName)", "/%2e%2e/\(secretName)", "/sub/../../\(secretName)"] {
            let response = try server.get(path)
            #expect(response.status != 200, "\(path)")
            #expect(!response.text.contains("TOP SECRET"), "\(path)")
        }
    }

    @Test func headGetsTheHeadersWithoutTheBody() throws {
        let server = try RunningTestServer()
        let connection = try TestHTTPConnection(port: server.port)
        let head = try connection.request("HEAD", "/app.js")
        #expect(head.status == 200)
        #expect(head[header: "content-length"] == "26")
        // The connection is still in step: the next response is the next request's.
        let next = try connection.request("GET", "/healthz")
        #expect(next.text == #"{"status":"ok"}"#)
    }

    @Test func fileResponsesKeepTheConnectionAlive() throws {
        let server = try RunningTestServer()
        let connection = try TestHTTPConnection(port: server.port)
        for path in ["/", "/app.js", "/index.html", "/app.js"] {
            let response = try connection.request("GET", path)
            #expect(response.status == 200, "\(path)")
            #expect(response[header: "connection"] != "close", "\(path)")
        }
    }

    @Test func aMissingWebRootIsAClearError() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("no-such-\(UUID().uuidString)").path
        let server = HTTPServer(configuration: HTTPServerOptions(host: "127.0.0.1", port: 0, webRoot: path))
        #expect(throws: HTTPServerError.self) { try server.start() }
        do {
            try server.start()
        } catch {
            #expect(error.code == .webRootMissing)
            #expect(error.description.contains(path))
        }
        #expect(server.boundPort == nil)
    }
}

@Suite("Font files")
struct FontFilesTests {
    @Test func aFontsFolderIsServedAtSlashFontsWithFontContentTypes() throws {
        let web = try TemporaryWebRoot()
        let fonts = try TemporaryWebRoot(files: [
            "DSEG7Classic-Regular.ttf": "not really a ttf",
            "Inter-Regular.otf": "not really an otf",
            "LICENSE-fonts-dseg.txt": "SIL Open Font License",
        ])
        let server = HTTPServer(configuration: HTTPServerOptions(
            host: "127.0.0.1", port: 0, webRoot: web.url.path, fontsPath: fonts.url.path))
        try server.start()
        defer { server.stop() }
        let port = try #require(server.boundPort)

        let ttf = try TestHTTPConnection.get("/fonts/DSEG7Classic-Regular.ttf", port: port)
        #expect(ttf.status == 200)
        #expect(ttf[header: "content-type"] == "font/ttf")
        #expect(ttf.text == "not really a ttf")
        let otf = try TestHTTPConnection.get("/fonts/Inter-Regular.otf", port: port)
        #expect(otf[header: "content-type"] == "font/otf")
        let licence = try TestHTTPConnection.get("/fonts/LICENSE-fonts-dseg.txt", port: port)
        #expect(licence.status == 200)
        #expect(licence[header: "content-type"]?.hasPrefix("text/plain") == true)

        let missing = try TestHTTPConnection.get("/fonts/DSEG14Classic-Regular.ttf", port: port)
        #expect(missing.status == 404)
        // The web root is still served beside it.
        #expect(try TestHTTPConnection.get("/app.js", port: port).status == 200)
    }

    @Test func aMissingFontsFolderServesNoFonts() throws {
        let web = try TemporaryWebRoot()
        let server = HTTPServer(configuration: HTTPServerOptions(
            host: "127.0.0.1", port: 0, webRoot: web.url.path, fontsPath: "/nonexistent/retrorapid-fonts"))
        try server.start()
        defer { server.stop() }
        let port = try #require(server.boundPort)
        #expect(try TestHTTPConnection.get("/fonts/DSEG7Classic-Regular.ttf", port: port).status == 404)
        #expect(try TestHTTPConnection.get("/", port: port).status == 200)
    }
}
