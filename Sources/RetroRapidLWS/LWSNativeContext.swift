#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CLibWebSockets
import RetroRapidSupport

/// Why a context could not start listening.
public enum LWSContextError: Error, Equatable {
    case contextCreationFailed
    /// `errno` of our own bind to the same address and port; `nil` when that bind works, so the
    /// cause is something else (TLS files, for one: see the libwebsockets log).
    case listenFailed(errno: Int32?)
}

/// One `lws_context`, with the C memory its creation info points into, the libev loop it runs
/// on, and (for a server) its one listening vhost. The server (through `LWSServiceThread`) and
/// the load generator both make theirs here.
///
/// Threading rule: the thread that creates it is its service thread: it alone calls `run`,
/// `stopLoop`, `connect` and `destroy`, and every callback runs on it. The one call another
/// thread may make is the `waker`'s `wake` (`lws_cancel_service`), and only until `destroy`.
public final class LWSNativeContext {
    /// What to create.
    public struct Options {
        /// protocols[0] first: it also gets the context-wide reasons (EVENT_WAIT_CANCELLED) and
        /// every connection's WSI_CREATE/DESTROY; and for a server it is the HTTP protocol, the
        /// callback mounts' origin and the raw-socket fallback's protocol.
        public var protocols: [LWSProtocol]
        /// epoll through Debian's libwebsockets-evlib-ev plugin, on a loop of ours; false: poll.
        public var usesLibev: Bool
        /// nil: a client context (no vhost listens).
        public var listen: Listen?

        public init(protocols: [LWSProtocol], usesLibev: Bool, listen: Listen? = nil) {
            self.protocols = protocols
            self.usesLibev = usesLibev
            self.listen = listen
        }
    }

    /// A server's one vhost.
    public struct Listen {
        /// A numeric IPv4 or IPv6 address; `nil` listens on every interface.
        public var address: String?
        /// 0 lets the kernel pick a free port (`listenPort` says which).
        public var port: Int
        public var mounts: [LWSMount]
        /// Headers added to every HTTP response the vhost sends (names with their colon).
        public var responseHeaders: [(name: String, value: String)]
        public var vhostName: String
        /// The `server:` header.
        public var serverString: String
        /// libwebsockets' buffer for one request's head (`max_http_header_data`).
        public var headerBufferBytes: Int
        /// A head still incomplete this long after it began is dropped (`timeout_secs_ah_idle`).
        public var headerTimeoutSeconds: Int
        public var tlsCertificatePath: String?
        public var tlsPrivateKeyPath: String?

        public init(address: String?, port: Int, mounts: [LWSMount], responseHeaders: [(name: String, value: String)],
                    vhostName: String, serverString: String, headerBufferBytes: Int, headerTimeoutSeconds: Int,
                    tlsCertificatePath: String?, tlsPrivateKeyPath: String?) {
            self.address = address
            self.port = port
            self.mounts = mounts
            self.responseHeaders = responseHeaders
            self.vhostName = vhostName
            self.serverString = serverString
            self.headerBufferBytes = headerBufferBytes
            self.headerTimeoutSeconds = headerTimeoutSeconds
            self.tlsCertificatePath = tlsCertificatePath
            self.tlsPrivateKeyPath = tlsPrivateKeyPath
        }
    }

    /// Wakes the service thread from any thread (`lws_cancel_service`): every protocol then gets
    /// LWS_CALLBACK_EVENT_WAIT_CANCELLED. Valid until the context is destroyed; whoever hands
    /// it to other threads must take it back (under a lock) before `destroy`.
    public struct Waker: @unchecked Sendable {
        // @unchecked: `lws_cancel_service` is the one libwebsockets call allowed off the
        // service thread.
        let pointer: OpaquePointer

        public func wake() {
            lws_cancel_service(pointer)
        }
    }

    /// Where client connections go, as C strings kept for the context's life.
    public struct ClientTarget {
        let address: UnsafePointer<CChar>
        let port: Int32
        let host: UnsafePointer<CChar>
        let path: UnsafePointer<CChar>
        let subprotocol: UnsafePointer<CChar>
        /// Local addresses to connect from, in turn (`iface`); empty: the kernel's choice.
        let sources: [UnsafePointer<CChar>]
    }

    /// The `lws_context *` (for `TickScheduler.attach`).
    public let pointer: OpaquePointer
    /// The port the vhost listens on; nil for a client context.
    public let listenPort: Int?
    private var allocations: LWSCAllocations
    /// The boxes the protocols' `user` pointers and the context's lead to.
    private let boxes: [LWSProtocolBox]
    private var eventLoop: LWSEventLoop?

    private init(pointer: OpaquePointer, listenPort: Int?, allocations: LWSCAllocations,
                 boxes: [LWSProtocolBox], eventLoop: LWSEventLoop?) {
        self.pointer = pointer
        self.listenPort = listenPort
        self.allocations = allocations
        self.boxes = boxes
        self.eventLoop = eventLoop
    }

    public var waker: Waker { Waker(pointer: pointer) }

    /// Serves until `stopLoop` (libev) or the next wake-up, event or timer (poll). False when
    /// libwebsockets reports the context broken.
    public func run() -> Bool {
        if let eventLoop {
            eventLoop.run()
            return true
        }
        // poll: the timeout argument is ignored by lws 4.1; it sleeps until the next event,
        // timer or lws_cancel_service.
        return lws_service(pointer, 0) >= 0
    }

    /// Makes `run` return once the callback in progress is done (libev; with poll `run`
    /// returns after each wake-up anyway). From a callback.
    public func stopLoop() {
        eventLoop?.stop()
    }

    /// Closes every connection (their last callbacks run now), frees the context, then its
    /// loop and C memory. Nothing may use the context afterwards.
    public func destroy() {
        lws_context_destroy(pointer)
        eventLoop = nil  // after the context: it may touch the loop while closing
        allocations.freeAll()
    }

    // MARK: - Client connections

    /// The C strings of a client connection's target, made once.
    public func clientTarget(address: String, port: Int, host: String, path: String, subprotocol: String,
                             sources: [String]) -> ClientTarget {
        ClientTarget(address: allocations.string(address), port: Int32(port), host: allocations.string(host),
                     path: allocations.string(path), subprotocol: allocations.string(subprotocol),
                     sources: sources.map { allocations.string($0) })
    }

    /// Opens a WebSocket client connection to `target` (its `Origin` is the host), from its
    /// `sourceIndex`-th source address if it has any. `opaqueUserData` comes back as the
    /// connection's `opaqueUserData`. A failure may be reported through
    /// CLIENT_CONNECTION_ERROR during this call; nil when it failed at once.
    public func connect(to target: ClientTarget, sourceIndex: Int, opaqueUserData: Int) -> LWSConnection? {
        var info = lws_client_connect_info()
        info.context = pointer
        info.address = target.address
        info.port = target.port
        info.path = target.path
        info.host = target.host
        info.origin = target.host
        info.protocol = target.subprotocol
        info.ietf_version_or_minus_one = -1
        if !target.sources.isEmpty {
            info.iface = target.sources[sourceIndex % target.sources.count]
        }
        info.opaque_user_data = UnsafeMutableRawPointer(bitPattern: opaqueUserData)
        return lws_client_connect_via_info(&info).map(LWSConnection.init)
    }

    // MARK: - Creation

    /// Creates the context (and the vhost, when `options.listen` is set) on the calling thread,
    /// which becomes its service thread.
    public static func create(_ options: Options) -> Result<LWSNativeContext, LWSContextError> {
        var allocations = LWSCAllocations()
        let boxes = options.protocols.map { LWSProtocolBox(callback: $0.callback, owner: $0.owner) }
        var eventLoop: LWSEventLoop?
        var info = lws_context_creation_info()
        if options.listen != nil { info.options = UInt64(LWS_SERVER_OPTION_EXPLICIT_VHOSTS) }
        if options.usesLibev {
            guard let loop = LWSEventLoop() else { return .failure(.contextCreationFailed) }
            eventLoop = loop
            info.options |= UInt64(LWS_SERVER_OPTION_LIBEV)
            info.foreign_loops = loop.foreignLoops
        }
        // Room for as many sockets as the process may open (libwebsockets sizes its tables
        // from this once, at creation).
        info.fd_limit_per_thread = UInt32(OpenFileLimit.raiseToHardLimit())
        // protocols[0]'s box (LWSCallbackTrampoline.firstProtocol).
        info.user = boxes.first.map { Unmanaged.passUnretained($0).toOpaque() }
        info.port = CONTEXT_PORT_NO_LISTEN
        guard let listen = options.listen else {
            // A client: the protocols go on the context's default vhost.
            info.protocols = makeProtocols(options.protocols, boxes: boxes, allocations: &allocations)
            guard let context = lws_create_context(&info) else {
                allocations.freeAll()
                return .failure(.contextCreationFailed)
            }
            return .success(LWSNativeContext(pointer: context, listenPort: nil, allocations: allocations,
                                             boxes: boxes, eventLoop: eventLoop))
        }
        if listen.tlsCertificatePath != nil {
            info.options |= UInt64(LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT)
        }
        if let address = listen.address, !address.contains(":") {
            // An IPv4 address: use an AF_INET socket rather than an IPv6 one with a mapped address.
            info.options |= UInt64(LWS_SERVER_OPTION_DISABLE_IPV6)
        }
        info.max_http_header_data = UInt16(listen.headerBufferBytes)
        guard let context = lws_create_context(&info) else {
            return .failure(.contextCreationFailed)
        }
        let result = createVhost(context, &info, listen, options.protocols, boxes: boxes, allocations: &allocations)
        switch result {
        case .failure(let error):
            lws_context_destroy(context)
            allocations.freeAll()
            return .failure(error)
        case .success(let port):
            return .success(LWSNativeContext(pointer: context, listenPort: port, allocations: allocations,
                                             boxes: boxes, eventLoop: eventLoop))
        }
    }

    private static func createVhost(_ context: OpaquePointer, _ info: inout lws_context_creation_info, _ listen: Listen,
                                    _ protocols: [LWSProtocol], boxes: [LWSProtocolBox],
                                    allocations: inout LWSCAllocations) -> Result<Int, LWSContextError> {
        // libwebsockets treats an address it cannot bind (EADDRNOTAVAIL) as an interface that
        // may appear later: it creates the vhost without listening and reports success. Find
        // that out first with a bind to the same address on a throwaway port.
        if let address = listen.address, let error = bindErrno(address: address, port: 0) {
            return .failure(.listenFailed(errno: error))
        }
        let httpProtocol = protocols.first?.name ?? ""
        info.port = Int32(listen.port)
        info.iface = listen.address.map { allocations.string($0) }
        info.vhost_name = allocations.string(listen.vhostName)
        info.server_string = allocations.string(listen.serverString)
        info.protocols = makeProtocols(protocols, boxes: boxes, allocations: &allocations)
        info.pvo = makeProtocolOptions(protocols, allocations: &allocations)
        info.retry_and_idle_policy = makeKeepalivePolicy(protocols, allocations: &allocations)
        info.mounts = makeMounts(listen.mounts, callbackProtocol: httpProtocol, allocations: &allocations)
        info.headers = makeNameValueList(listen.responseHeaders, allocations: &allocations)
        // libwebsockets 4.1.6 does not restart this clock as bytes come; the default is 10 s.
        info.timeout_secs_ah_idle = UInt32(listen.headerTimeoutSeconds)
        // A request line with a method libwebsockets does not know (TRACE, anything made up)
        // would get its HTML 403 page; CONNECT would become a raw socket no one reads, never
        // timed out. With this option both come to protocols[0] as a raw socket (RAW_ADOPT,
        // RAW_RX), which can answer them.
        info.options |= UInt64(LWS_SERVER_OPTION_FALLBACK_TO_APPLY_LISTEN_ACCEPT_CONFIG)
        info.listen_accept_role = allocations.string("raw-skt")
        info.listen_accept_protocol = allocations.string(httpProtocol)
        if let certificate = listen.tlsCertificatePath, let key = listen.tlsPrivateKeyPath {
            info.ssl_cert_filepath = allocations.string(certificate)
            info.ssl_private_key_filepath = allocations.string(key)
        }
        // A bind that fails for a reason the caller explains itself (port in use, no such
        // address, permission) is reported once in its words: libwebsockets' own lines for it
        // are dropped. Any other failure keeps them (they are the only explanation).
        var bindError: Int32?
        let created = LWSLogging.holdingMessages({ () -> OpaquePointer? in
            let vhost = lws_create_vhost(context, &info)
            if vhost == nil { bindError = bindErrno(address: listen.address, port: listen.port) }
            return vhost
        }, keep: { vhost in
            vhost != nil || ![EADDRINUSE, EADDRNOTAVAIL, EACCES].contains(bindError ?? 0)
        })
        guard let vhost = created else { return .failure(.listenFailed(errno: bindError)) }
        let port = Int(lws_get_vhost_listen_port(vhost))
        guard port > 0 else { return .failure(.listenFailed(errno: nil)) }
        return .success(port)
    }

    /// The protocols in order, then the zeroed terminator. protocols[0] is reached through the
    /// context's user pointer, the others through their own.
    private static func makeProtocols(_ protocols: [LWSProtocol], boxes: [LWSProtocolBox],
                                      allocations: inout LWSCAllocations) -> UnsafePointer<lws_protocols> {
        let list = allocations.array(of: lws_protocols.self, count: protocols.count + 1)
        for (index, definition) in protocols.enumerated() {
            list[index].name = allocations.string(definition.name)
            list[index].per_session_data_size = definition.perSessionDataSize
            list[index].rx_buffer_size = definition.rxBufferSize
            list[index].tx_packet_size = definition.txPacketSize
            if index == 0 {
                list[index].callback = LWSCallbackTrampoline.firstProtocol
            } else {
                list[index].callback = LWSCallbackTrampoline.laterProtocol
                list[index].user = Unmanaged.passUnretained(boxes[index]).toOpaque()
            }
        }
        return UnsafePointer(list)
    }

    /// Per-vhost protocol options: `default` on the protocol that takes clients asking for no
    /// subprotocol.
    private static func makeProtocolOptions(_ protocols: [LWSProtocol], allocations: inout LWSCAllocations)
        -> UnsafePointer<lws_protocol_vhost_options>?
    {
        var next: UnsafePointer<lws_protocol_vhost_options>?
        for definition in protocols where definition.isDefault {
            let option = allocations.array(of: lws_protocol_vhost_options.self, count: 1)
            option.pointee.name = allocations.string("default")
            option.pointee.value = allocations.string("1")
            let node = allocations.array(of: lws_protocol_vhost_options.self, count: 1)
            node.pointee.next = next
            node.pointee.name = allocations.string(definition.name)
            node.pointee.value = allocations.string("")
            node.pointee.options = UnsafePointer(option)
            next = UnsafePointer(node)
        }
        return next
    }

    /// The keepalive a protocol asked for, as libwebsockets' retry policy (only its idle part
    /// applies to a server's connections).
    private static func makeKeepalivePolicy(_ protocols: [LWSProtocol], allocations: inout LWSCAllocations)
        -> UnsafePointer<lws_retry_bo_t>?
    {
        guard let keepalive = protocols.lazy.compactMap(\.keepalive).first else { return nil }
        let policy = allocations.array(of: lws_retry_bo_t.self, count: 1)
        policy.pointee.secs_since_valid_ping = UInt16(keepalive.pingSeconds)
        policy.pointee.secs_since_valid_hangup = UInt16(keepalive.hangupSeconds)
        return UnsafePointer(policy)
    }

    private static func makeMounts(_ mounts: [LWSMount], callbackProtocol: String,
                                   allocations: inout LWSCAllocations) -> UnsafePointer<lws_http_mount>? {
        var next: UnsafePointer<lws_http_mount>?
        for mount in mounts.reversed() {
            let m = allocations.array(of: lws_http_mount.self, count: 1)
            m.pointee.mount_next = next
            switch mount {
            case .files(let mountpoint, let directory, let defaultFile, let extraMimeTypes):
                m.pointee.mountpoint = allocations.string(mountpoint)
                m.pointee.mountpoint_len = UInt8(mountpoint.utf8.count)
                m.pointee.origin = allocations.string(directory)
                m.pointee.def = allocations.string(defaultFile)
                m.pointee.origin_protocol = UInt8(LWSMPRO_FILE.rawValue)
                m.pointee.extra_mimetypes = makeNameValueList(
                    extraMimeTypes.map { (name: $0.suffix, value: $0.contentType) }, allocations: &allocations)
                // "must-revalidate, public, max-age=1": browsers keep files but ask again after
                // a second and get a 304 while the ETag matches. The client has no build step
                // and no versioned file names, so files must not be reused without asking.
                // (libwebsockets cannot say "no-cache": with max-age 0 it sends "no-store", and
                // then browsers never send If-None-Match.)
                m.pointee.cache_max_age = 1
                m.pointee.cache_reusable = 1
                m.pointee.cache_revalidate = 1
                m.pointee.cache_intermediaries = 1
            case .callback(let mountpoint):
                m.pointee.mountpoint = allocations.string(mountpoint)
                m.pointee.mountpoint_len = UInt8(mountpoint.utf8.count)
                m.pointee.origin = allocations.string(callbackProtocol)
                m.pointee.origin_protocol = UInt8(LWSMPRO_CALLBACK.rawValue)
            }
            next = UnsafePointer(m)
        }
        return next
    }

    /// A `lws_protocol_vhost_options` linked list of name/value pairs, in order.
    private static func makeNameValueList(_ pairs: [(name: String, value: String)], allocations: inout LWSCAllocations)
        -> UnsafePointer<lws_protocol_vhost_options>?
    {
        var next: UnsafePointer<lws_protocol_vhost_options>?
        for pair in pairs.reversed() {
            let node = allocations.array(of: lws_protocol_vhost_options.self, count: 1)
            node.pointee.next = next
            node.pointee.name = allocations.string(pair.name)
            node.pointee.value = allocations.string(pair.value)
            next = UnsafePointer(node)
        }
        return next
    }
}

/// Binds a throwaway socket the way libwebsockets does (SO_REUSEADDR) to learn why its bind
/// failed: libwebsockets only logs the errno. Returns nil when the bind works.
private func bindErrno(address: String?, port: Int) -> Int32? {
    var hints = addrinfo()
    hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV
    hints.ai_family = AF_UNSPEC
    #if canImport(Glibc)
    hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
    #else
    hints.ai_socktype = SOCK_STREAM
    #endif
    var list: UnsafeMutablePointer<addrinfo>?
    guard getaddrinfo(address, String(port), &hints, &list) == 0, let info = list else {
        return EADDRNOTAVAIL
    }
    defer { freeaddrinfo(list) }
    let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype, 0)
    guard fd >= 0 else { return errno }
    defer { close(fd) }
    var one: Int32 = 1
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
    return bind(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 ? nil : errno
}
