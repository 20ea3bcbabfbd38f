/// Why the HTTP server could not start. `description` says what failed and what to do.
public struct HTTPServerError: Error, Equatable, CustomStringConvertible, Sendable {
    /// What kind of failure; new kinds may be added without breaking callers.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }

        public static let webRootMissing = Code("web_root_missing")
        public static let invalidHost = Code("invalid_host")
        public static let invalidPort = Code("invalid_port")
        public static let tlsFilesMissing = Code("tls_files_missing")
        public static let portInUse = Code("port_in_use")
        public static let addressUnavailable = Code("address_unavailable")
        public static let permissionDenied = Code("permission_denied")
        public static let listenFailed = Code("listen_failed")
        public static let alreadyStarted = Code("already_started")
    }

    public let code: Code
    public let message: String

    init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
