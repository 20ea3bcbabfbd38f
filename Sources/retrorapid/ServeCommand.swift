#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Foundation
import RetroRapidServer

/// `retrorapid serve`: runs the server until SIGINT or SIGTERM, then stops it gracefully.
/// The server is `RetroRapidServer.HTTPServer`; this only reads options and waits for a signal.
enum ServeCommand: Command {
    static let name = "serve"
    static let summary = "run the server: the browser client, /healthz and the API"
    static let usage = """
        usage: retrorapid serve [--host H] [--port N] [--web-root DIR]

        Serves the browser client in DIR at / and the API, until SIGINT (Ctrl-C) or SIGTERM;
        then closes every connection and exits 0.

        options:
          --host H          numeric address to listen on; 0.0.0.0 for every interface
                            (default: 0.0.0.0, or RETRORAPID_HOST)
          --port N          TCP port, 0 for any free one (default: 8080, or RETRORAPID_PORT)
          --web-root DIR    the folder holding index.html (default: Web, or RETRORAPID_WEB_ROOT)

        An option on the command line wins over the environment variable.
        """

    static func run(arguments: [String]) throws -> Int32 {
        let options = try options(from: arguments, environment: ProcessInfo.processInfo.environment)

        // Before the server starts, so a signal that comes early is not lost (or fatal):
        // the default actions are turned off and the signals arrive as dispatch events instead.
        let stopRequested = DispatchSemaphore(value: 0)
        let signalSources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { stopRequested.signal() }
            source.resume()
            return source
        }

        let server = HTTPServer(configuration: options)
        try server.start()
        let webRoot = URL(fileURLWithPath: options.webRoot).standardizedFileURL.path
        let host = options.host.contains(":") ? "[\(options.host)]" : options.host
        let scheme = options.tlsCertificatePath == nil ? "http" : "https"
        say("RetroRapid serving \(scheme)://\(host):\(server.boundPort ?? options.port) (web root \(webRoot))")

        stopRequested.wait()
        say("RetroRapid stopping")
        server.stop()
        signalSources.forEach { $0.cancel() }
        say("RetroRapid stopped")
        return 0
    }

    /// Defaults, overlaid by the environment, overlaid by the command line.
    static func options(from arguments: [String], environment: [String: String]) throws -> HTTPServerOptions {
        var options = HTTPServerOptions(host: "0.0.0.0", port: 8080, webRoot: "Web")
        if let host = environment["RETRORAPID_HOST"] { options.host = host }
        if let port = environment["RETRORAPID_PORT"] { options.port = try parsePort(port, from: "RETRORAPID_PORT") }
        if let webRoot = environment["RETRORAPID_WEB_ROOT"] { options.webRoot = webRoot }

        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            let (flag, inlineValue) = splitInlineValue(argument)
            func value() throws -> String {
                if let inlineValue { return inlineValue }
                guard let next = remaining.popFirst() else { throw UsageError("\(flag) needs a value") }
                return next
            }
            switch flag {
            case "--host": options.host = try value()
            case "--port": options.port = try parsePort(try value(), from: "--port")
            case "--web-root": options.webRoot = try value()
            default: throw UsageError("unknown argument '\(argument)'")
            }
        }
        return options
    }

    /// `--port=8080` is read like `--port 8080`.
    private static func splitInlineValue(_ argument: String) -> (String, String?) {
        guard argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") else { return (argument, nil) }
        return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
    }

    private static func parsePort(_ text: String, from source: String) throws -> Int {
        guard let port = Int(text), (0...65535).contains(port) else {
            throw UsageError("\(source) must be a port number from 0 to 65535, not '\(text)'")
        }
        return port
    }

    /// One line on standard output, written at once (print would sit in a buffer when the
    /// output is a pipe or a journal).
    private static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}
