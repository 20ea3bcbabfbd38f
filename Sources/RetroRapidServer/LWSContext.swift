#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CLibWebSockets
import Dispatch
import Foundation
import RetroRapidLWS
import RetroRapidSupport
import Synchronization

/// What an `LWSContext` listens on and serves, in Swift terms. The context turns it into the C
/// structs libwebsockets wants and keeps them alive for the context's whole life.
struct LWSContextOptions: Sendable {
    /// A numeric IPv4 or IPv6 address; `nil` listens on every interface.
    var address: String?
    /// 0 lets the kernel pick a free port; `LWSContext.start()` returns the one bound.
    var port: Int
    /// Mounts in the vhost's URL space. libwebsockets picks the longest matching mountpoint.
    var mounts: [LWSMount]
    /// Headers added to every HTTP response the vhost sends (files, routes, errors, 304s).
    var responseHeaders: [(name: String, value: String)]
    /// Answers requests that land on `.callback` mounts. Called on the service thread.
    var httpHandler: HTTPHandler
    var tlsCertificatePath: String?
    var tlsPrivateKeyPath: String?
    /// Protocols after the HTTP one (which is always `protocols[0]`): the WebSocket side.
    var protocols: [LWSProtocolDefinition] = []
    var eventLoop: EventLoop = .libev
    /// What every request's head is held to before a handler or the file mount sees it.
    var requestLimits = HTTPRequestLimits()
    /// Who a request counts as coming from, for `requestLimits.maxConnectionsPerIP`.
    var clientAddresses = ClientAddressResolver(trustedProxies: [])
    /// Told of each request refused before any handler ran (for the log and metrics). Called on
    /// the service thread; must not block.
    var onRefusal: @Sendable (HTTPRefusalRecord) -> Void = { _ in }
}

/// A request answered by the HTTP layer itself, before any route or file: what the log says.
public struct HTTPRefusalRecord: Sendable, Equatable {
    /// As sent, also when it is no method this server knows ("TRACE").
    public var method: String
    public var path: String
    public var peerAddress: String
    public var clientAddress: String
    public var refusal: APIError
    /// False when libwebsockets had already closed the connection without an answer (a head it
    /// could not parse): then `refusal` is what it would have been, for the log.
    public var answered = true
}

/// A libwebsockets protocol added to the vhost after the HTTP one. Its callback runs on the
/// service thread and must ignore LWS_CALLBACK_EVENT_WAIT_CANCELLED (protocols[0] drains the
/// mailbox) and leave LWS_CALLBACK_WSI_CREATE/DESTROY to protocols[0] (which counts them).
struct LWSProtocolDefinition: @unchecked Sendable {
    // @unchecked: `callback` is a C function pointer, which captures nothing.
    typealias Callback = @convention(c) (OpaquePointer?, lws_callback_reasons, UnsafeMutableRawPointer?,
                                         UnsafeMutableRawPointer?, Int) -> Int32
    var name: String
    var callback: Callback
    /// Bytes of zeroed per-connection memory libwebsockets gives the callback as `user`.
    var perSessionDataSize: Int
    /// Largest piece of a message handed to one RECEIVE callback; 0 for the default (4096).
    var rxBufferSize: Int = 0
    /// Reached from the callback as `lws_get_protocol(wsi)->user` (unretained: the definition,
    /// kept in the context's options, holds it for the context's whole life).
    var owner: (any AnyObject & Sendable)? = nil
    /// The protocol for clients that ask for no subprotocol (the vhost's "default" option).
    var isDefault: Bool = false
    /// When set, `protocols[0]`'s callback in place of `lwsHTTPCallback` (WebSocket side):
    /// libwebsockets asks only protocols[0] to confirm an upgrade (HTTP_CONFIRM_UPGRADE), so this
    /// answers that reason and passes every other one to `lwsHTTPCallback` unchanged.
    var httpCallback: Callback? = nil
    /// The vhost's keepalive (`retry_and_idle_policy`, WebSocket side): a PING after
    /// `pingSeconds` of silence, a hang-up when no PONG came within `hangupSeconds`; (0, 0)
    /// turns libwebsockets' own keepalive off (nil leaves its 5-minute default on).
    var keepalive: (pingSeconds: Int, hangupSeconds: Int)? = nil
}

/// One entry in the vhost's URL space.
enum LWSMount: Sendable {
    /// Serve a directory (`LWSMPRO_FILE`): libwebsockets does ranges, ETag and 304 itself, and
    /// hands a request for a missing file to the protocol callback (so to `httpHandler`).
    /// `extraMimeTypes` maps a file name suffix (".mjs") to a content type; libwebsockets checks
    /// it before its own table and answers 415 for a file neither names.
    case files(mountpoint: String, directory: String, defaultFile: String,
               extraMimeTypes: [(suffix: String, contentType: String)])
    /// Hand requests to our protocol callback (`LWSMPRO_CALLBACK`), which calls `httpHandler`.
    case callback(mountpoint: String)
}

/// Why a context could not start listening.
enum LWSContextError: Error, Equatable {
    case contextCreationFailed
    /// `errno` of our own bind to the same address and port; `nil` when that bind works, so the
    /// cause is something else (TLS files, for one: see the libwebsockets log).
    case listenFailed(errno: Int32?)
}

/// Owns one `lws_context` and the one thread that services it.
///
/// Threading rule: the service thread created by `start()` makes every libwebsockets call:
/// it creates the context and vhost, runs `lws_service` until stopped, runs every callback, and
/// destroys the context. Any other thread may only call `stop()`/`wait()`, which use
/// `lws_cancel_service` (the one call libwebsockets allows off the service thread).
/// The C strings and structs handed to libwebsockets live in `allocations` and are freed on
/// the service thread after `lws_context_destroy`.
final class LWSContext: @unchecked Sendable {
    // @unchecked: `allocations` and the exchange tables are touched only by the service thread
    // (and read by tests after `wait()`); everything else shared is a Mutex, Atomic or let.

    let options: LWSContextOptions
    /// The name of our one HTTP protocol; callback mounts name it as their origin.
    static let httpProtocolName = "retrorapid-http"
    /// How other threads hand work to the service thread. Drained by `protocols[0]`'s callback
    /// on LWS_CALLBACK_EVENT_WAIT_CANCELLED, and once more before the context is destroyed.
    let mailbox: ServiceMailbox

    private let stopRequested = Atomic<Bool>(false)
    private let shared = Mutex(SharedState())
    /// Left when the service thread has destroyed the context and freed its C memory.
    private let finished = DispatchGroup()
    /// Signalled once the service thread knows whether the vhost is listening.
    private let startupDone = DispatchSemaphore(value: 0)
    private var allocations = CAllocations()
    /// Service thread only: the libev loop the context runs on (nil with the poll loop).
    private var eventLoop: LWSEventLoop?
    /// New connections are accepted until shutdown begins (`stopAccepting`).
    private let accepting = Atomic<Bool>(true)
    private let connections = Atomic<Int>(0)

    // Service thread only: the live HTTP exchanges, by connection and by id.
    private var exchangesByWSI: [OpaquePointer: HTTPExchange] = [:]
    private var exchangesByID: [UInt64: HTTPExchange] = [:]
    private var lastExchangeID: UInt64 = 0
    /// Answers that came for an exchange already gone (its client left): for tests and logs.
    private(set) var droppedAnswerCount = 0
    /// Service thread only: per-address connection counts and request clocks, by connection.
    var connectionTracker: HTTPConnectionTracker<OpaquePointer>
    /// Service thread only: requests whose head `LWS_CALLBACK_FILTER_HTTP_CONNECTION` admitted,
    /// until LWS_CALLBACK_HTTP takes them (file requests never come for theirs; the next
    /// request or the connection's end replaces them).
    var admittedRequests: [OpaquePointer: (request: HTTPRequest, bodyLength: Int)] = [:]
    /// Fires at the deadline of each request still receiving its body (ids are exchange ids).
    /// Kept armed at most a second ahead (see `TickScheduler.maximumSleep`): an idle server
    /// wakes once a second for it.
    private let requestDeadlines = TickScheduler(granularityMicroseconds: 100_000, maximumSleepMicroseconds: 1_000_000)

    private struct SharedState {
        var phase = Phase.idle
        /// Set while the context exists, so `stop()` can reach `lws_cancel_service`. Cleared by
        /// the service thread, under the lock, before `lws_context_destroy`.
        var context: ContextHandle?
        /// The service thread, once created; kept after it ends so it can be recognised.
        var thread: pthread_t?
        /// Set by the one caller of `wait()` that joins the thread; the others wait on `finished`.
        var joinClaimed = false
        var startupResult: Result<Int, LWSContextError>?
    }

    private enum Phase { case idle, running, finished }

    /// `lws_context *` is an `OpaquePointer`, which is not Sendable; the only thing done with it
    /// off the service thread is `lws_cancel_service`, under the `shared` lock.
    private struct ContextHandle: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    init(options: LWSContextOptions, mailbox: ServiceMailbox = ServiceMailbox()) {
        self.options = options
        self.mailbox = mailbox
        connectionTracker = HTTPConnectionTracker(maxConnectionsPerAddress: options.requestLimits.maxConnectionsPerIP)
    }

    /// Creates the service thread and blocks until the vhost is listening or has failed.
    /// Returns the bound port (the kernel's choice when `options.port` is 0).
    func start() throws(LWSContextError) -> Int {
        LWSLogging.configureOnce()
        let thread: pthread_t? = shared.withLock { state in
            precondition(state.phase == .idle, "LWSContext.start() called twice")
            state.phase = .running
            finished.enter()
            var thread = pthread_t()
            // The thread owns one retain of self until it has destroyed the context: callbacks
            // that run during lws_context_destroy still find the object alive.
            let retained = Unmanaged.passRetained(self).toOpaque()
            let rc = pthread_create(&thread, nil, { argument in
                let context = Unmanaged<LWSContext>.fromOpaque(argument!).takeRetainedValue()
                context.serviceThreadMain()
                return nil
            }, retained)
            guard rc == 0 else {
                Unmanaged<LWSContext>.fromOpaque(retained).release()
                state.phase = .finished
                finished.leave()
                return nil
            }
            state.thread = thread
            return thread
        }
        guard thread != nil else { throw .contextCreationFailed }
        startupDone.wait()
        let result = shared.withLock { $0.startupResult }!
        switch result {
        case .success(let port):
            return port
        case .failure(let error):
            wait()
            throw error
        }
    }

    /// Asks the service loop to end and waits until the context is destroyed. Safe from any
    /// thread, any number of times. Called on the service thread itself (from a handler), it
    /// only asks, because waiting there would deadlock.
    func stop() {
        stopRequested.store(true, ordering: .releasing)
        shared.withLock { state in
            if let context = state.context {
                lws_cancel_service(context.pointer)
            }
        }
        wait()
    }

    /// Blocks until the service thread has destroyed the context, and joins it. On the service
    /// thread itself it returns at once.
    func wait() {
        enum Action { case join(pthread_t), waitForFinish, none }
        let action: Action = shared.withLock { state in
            guard let thread = state.thread else { return .waitForFinish }
            if pthread_equal(thread, pthread_self()) != 0 { return .none }
            if state.joinClaimed { return .waitForFinish }
            state.joinClaimed = true
            return .join(thread)
        }
        switch action {
        case .join(let thread): pthread_join(thread, nil)
        case .waitForFinish: finished.wait()
        case .none: break
        }
    }

    /// Whether the calling thread is this context's service thread.
    var isServiceThread: Bool {
        shared.withLock { state in
            state.thread.map { pthread_equal($0, pthread_self()) != 0 } ?? false
        }
    }

    /// From now on, new TCP connections are closed as soon as they are accepted; the ones open
    /// are served until `stop()`. Any thread.
    func stopAccepting() {
        accepting.store(false, ordering: .releasing)
    }

    var isAccepting: Bool {
        accepting.load(ordering: .acquiring)
    }

    /// Connections open now (HTTP and WebSocket): for /metrics. Any thread.
    var openConnectionCount: Int {
        connections.load(ordering: .relaxed)
    }

    func connectionOpened() {
        connections.add(1, ordering: .relaxed)
    }

    func connectionClosed() {
        connections.subtract(1, ordering: .relaxed)
    }

    // MARK: - HTTP exchanges (service thread)

    /// Live HTTP exchanges; tests read it after `wait()`.
    var openExchangeCount: Int { exchangesByID.count }

    /// Starts the exchange of a request that just arrived on `wsi` (ending any earlier one).
    func registerExchange(wsi: OpaquePointer, request: HTTPRequest, expectsBody: Bool) -> HTTPExchange {
        releaseExchange(of: wsi)
        lastExchangeID += 1
        let exchange = HTTPExchange(id: lastExchangeID, wsi: wsi, request: request, expectsBody: expectsBody)
        exchangesByWSI[wsi] = exchange
        exchangesByID[exchange.id] = exchange
        return exchange
    }

    func exchange(of wsi: OpaquePointer) -> HTTPExchange? {
        exchangesByWSI[wsi]
    }

    /// The exchange's body must be in by `deadline` (monotonic microseconds), or it is
    /// answered 408 (`requestDeadlinePassed`).
    func scheduleBodyDeadline(_ exchange: HTTPExchange, at deadline: Int64) {
        requestDeadlines.schedule(Int(exchange.id), at: deadline)
    }

    /// Service thread, from the deadline timer: a request still receiving its body is answered
    /// 408 and its connection closed once the answer is out (on the next WRITEABLE).
    private func requestDeadlinePassed(_ id: Int) {
        guard let exchange = exchangesByID[UInt64(id)], exchange.expectsBody,
              !exchange.responseStarted, exchange.answer == nil else { return }
        let limit = options.requestLimits.requestTimeoutSeconds
        let refusal = APIError(status: 408, code: "request_timeout",
            message: "The request did not arrive whole within \(limit) seconds; send it again, faster.")
        exchange.expectsBody = false  // what still comes is not read
        exchange.closesAfterResponse = true
        exchange.answer = refusal.response
        options.onRefusal(HTTPRefusalRecord(
            method: exchange.request.method.rawValue, path: exchange.request.path,
            peerAddress: exchange.request.remoteAddress,
            clientAddress: options.clientAddresses.clientAddress(
                peer: exchange.request.remoteAddress, forwardedFor: exchange.request[header: "x-forwarded-for"]),
            refusal: refusal))
        lws_callback_on_writable(exchange.wsi)
    }

    /// Forgets the exchange on `wsi`, if any: its response is written, or the connection is
    /// going. An answer that comes for it later finds nothing.
    func releaseExchange(of wsi: OpaquePointer) {
        guard let exchange = exchangesByWSI.removeValue(forKey: wsi) else { return }
        exchangesByID[exchange.id] = nil
    }

    /// The responder for one exchange. It may be called from any thread: off the service
    /// thread it posts the answer to the mailbox.
    func responder(for id: UInt64) -> HTTPResponder {
        HTTPResponder { [self] response in
            if isServiceThread {
                deliver(response, to: id)
            } else {
                mailbox.post { self.deliver(response, to: id) }
            }
        }
    }

    /// Service thread: hands an answer to its exchange if it is still live and unanswered.
    /// Outside the handler's own call, the answer is written on the next WRITEABLE.
    private func deliver(_ response: HTTPResponse, to id: UInt64) {
        guard let exchange = exchangesByID[id] else {
            droppedAnswerCount += 1
            return
        }
        guard exchange.answer == nil, !exchange.responseStarted else { return }
        exchange.answer = response
        if !exchange.handlerRunning {
            lws_callback_on_writable(exchange.wsi)
        }
    }

    // MARK: - Service thread

    private func serviceThreadMain() {
        defer { finished.leave() }
        nameCurrentThread("rr-service")  // what `top -H` and `perf` show for it
        switch createContextAndVhost() {
        case .failure(let error):
            shared.withLock { state in
                state.startupResult = .failure(error)
                state.phase = .finished
            }
            allocations.freeAll()
            startupDone.signal()
        case .success(let (context, port)):
            shared.withLock { state in
                state.context = ContextHandle(pointer: context)
                state.startupResult = .success(port)
            }
            mailbox.attach(context: context)
            startupDone.signal()
            while !stopRequested.load(ordering: .acquiring) {
                if let eventLoop {
                    eventLoop.run()  // until `serviceWoken` stops it
                } else if lws_service(context, 0) < 0 {
                    // poll: the timeout argument is ignored by lws 4.1; it sleeps until the
                    // next event, timer or lws_cancel_service.
                    break
                }
            }
            beginDestroy(context)
            allocations.freeAll()
        }
    }

    /// Service thread, after the mailbox is drained on LWS_CALLBACK_EVENT_WAIT_CANCELLED: a
    /// stop asked for leaves the libev loop (the poll loop checks the flag after each wakeup).
    func serviceWoken() {
        if stopRequested.load(ordering: .acquiring) { eventLoop?.stop() }
    }

    /// Ends serving: the last mailbox jobs run while every connection still exists, then
    /// libwebsockets closes them all and frees the context (once its loop has stopped).
    private func beginDestroy(_ context: OpaquePointer) {
        shared.withLock { state in
            state.context = nil
            state.phase = .finished
        }
        // Jobs posted until now run while every connection still exists; later ones wait for a
        // next context (a restart) and are dropped with the mailbox otherwise.
        mailbox.detach()
        mailbox.drainAll()
        requestDeadlines.detach()  // before the context frees its timer lists
        lws_context_destroy(context)
        eventLoop = nil  // after the context: it may touch the loop while closing
    }

    private func createContextAndVhost() -> Result<(OpaquePointer, Int), LWSContextError> {
        var info = lws_context_creation_info()
        info.options = UInt64(LWS_SERVER_OPTION_EXPLICIT_VHOSTS)
        if options.eventLoop == .libev {
            // epoll through Debian's libwebsockets-evlib-ev plugin, on a loop of ours.
            guard let loop = LWSEventLoop() else { return .failure(.contextCreationFailed) }
            eventLoop = loop
            info.options |= UInt64(LWS_SERVER_OPTION_LIBEV)
            info.foreign_loops = loop.foreignLoops
        }
        // Room for as many sockets as the process may open (libwebsockets sizes its tables
        // from this once, at creation).
        info.fd_limit_per_thread = UInt32(OpenFileLimit.raiseToHardLimit())
        if options.tlsCertificatePath != nil {
            info.options |= UInt64(LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT)
        }
        if let address = options.address, !address.contains(":") {
            // An IPv4 address: use an AF_INET socket rather than an IPv6 one with a mapped address.
            info.options |= UInt64(LWS_SERVER_OPTION_DISABLE_IPV6)
        }
        info.user = Unmanaged.passUnretained(self).toOpaque()
        info.port = CONTEXT_PORT_NO_LISTEN
        // Room for a head above our own limits, so a client meets those, with their answers
        // (LWSHTTPConnection.swift), rather than libwebsockets' silent drop at 4096 bytes.
        info.max_http_header_data = UInt16(options.requestLimits.headerBufferBytes)
        guard let context = lws_create_context(&info) else {
            return .failure(.contextCreationFailed)
        }

        // libwebsockets treats an address it cannot bind (EADDRNOTAVAIL) as an interface that
        // may appear later: it creates the vhost without listening and reports success. Find
        // that out first with a bind to the same address on a throwaway port.
        if let address = options.address, let error = bindErrno(address: address, port: 0) {
            lws_context_destroy(context)
            return .failure(.listenFailed(errno: error))
        }
        info.port = Int32(options.port)
        info.iface = options.address.map { allocations.string($0) }
        info.vhost_name = allocations.string("retrorapid")
        info.server_string = allocations.string("RetroRapid")
        info.protocols = makeProtocols()
        info.pvo = makeProtocolOptions()
        info.retry_and_idle_policy = makeKeepalivePolicy()  // WebSocket side: nil unless asked
        info.mounts = makeMounts()
        info.headers = makeNameValueList(options.responseHeaders)
        // A head still incomplete this long after it began is dropped (libwebsockets 4.1.6
        // does not restart this clock as bytes come; the default is 10 s).
        info.timeout_secs_ah_idle = UInt32(options.requestLimits.headerTimeoutSeconds)
        // A request line with a method libwebsockets does not know (TRACE, anything made up)
        // would get its HTML 403 page; CONNECT would become a raw socket no one reads, never
        // timed out. With this option both come to our HTTP protocol as a raw socket, which
        // answers the API's JSON 405 (LWSHTTPConnection.swift, LWS_CALLBACK_RAW_RX).
        info.options |= UInt64(LWS_SERVER_OPTION_FALLBACK_TO_APPLY_LISTEN_ACCEPT_CONFIG)
        info.listen_accept_role = allocations.string("raw-skt")
        info.listen_accept_protocol = allocations.string(Self.httpProtocolName)
        if let certificate = options.tlsCertificatePath, let key = options.tlsPrivateKeyPath {
            info.ssl_cert_filepath = allocations.string(certificate)
            info.ssl_private_key_filepath = allocations.string(key)
        }
        // Service thread. A bind that fails for a reason HTTPServer explains itself (port in use,
        // no such address, permission) is reported once in its words: libwebsockets' own lines
        // for it are dropped. Any other failure keeps them (they are the only explanation).
        var bindError: Int32?
        let created = LWSLogging.holdingMessages({ () -> OpaquePointer? in
            let vhost = lws_create_vhost(context, &info)
            if vhost == nil { bindError = bindErrno(address: options.address, port: options.port) }
            return vhost
        }, keep: { vhost in
            vhost != nil || ![EADDRINUSE, EADDRNOTAVAIL, EACCES].contains(bindError ?? 0)
        })
        guard let vhost = created else {
            lws_context_destroy(context)
            return .failure(.listenFailed(errno: bindError))
        }
        let port = Int(lws_get_vhost_listen_port(vhost))
        guard port > 0 else {
            lws_context_destroy(context)
            return .failure(.listenFailed(errno: nil))
        }
        requestDeadlines.onDue = { [unowned self] id, _ in requestDeadlinePassed(id) }
        requestDeadlines.attach(context: context)
        return .success((context, port))
    }

    /// Our HTTP protocol, first in the list so it is also the vhost's HTTP protocol, then the
    /// WebSocket side's, then the zeroed terminator. The HTTP protocol keeps no per-connection
    /// memory: exchanges live in the context's table, keyed by connection.
    private func makeProtocols() -> UnsafePointer<lws_protocols> {
        let protocols = allocations.array(of: lws_protocols.self, count: options.protocols.count + 2)
        protocols[0].name = allocations.string(Self.httpProtocolName)
        // WebSocket side: a protocol may wrap the HTTP callback to confirm upgrades.
        protocols[0].callback = options.protocols.lazy.compactMap(\.httpCallback).first ?? lwsHTTPCallback
        for (index, definition) in options.protocols.enumerated() {
            protocols[index + 1].name = allocations.string(definition.name)
            protocols[index + 1].callback = definition.callback
            protocols[index + 1].per_session_data_size = definition.perSessionDataSize
            protocols[index + 1].rx_buffer_size = definition.rxBufferSize
            protocols[index + 1].user = definition.owner.map { Unmanaged.passUnretained($0).toOpaque() }
        }
        return UnsafePointer(protocols)
    }

    /// Per-vhost protocol options: `default` on the protocol that takes clients asking for no
    /// subprotocol.
    /// The keepalive a WebSocket protocol asked for, as libwebsockets' retry policy (only its
    /// idle part applies to a server's connections).
    private func makeKeepalivePolicy() -> UnsafePointer<lws_retry_bo_t>? {
        guard let keepalive = options.protocols.lazy.compactMap(\.keepalive).first else { return nil }
        let policy = allocations.array(of: lws_retry_bo_t.self, count: 1)
        policy.pointee.secs_since_valid_ping = UInt16(keepalive.pingSeconds)
        policy.pointee.secs_since_valid_hangup = UInt16(keepalive.hangupSeconds)
        return UnsafePointer(policy)
    }

    private func makeProtocolOptions() -> UnsafePointer<lws_protocol_vhost_options>? {
        var next: UnsafePointer<lws_protocol_vhost_options>?
        for definition in options.protocols where definition.isDefault {
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

    private func makeMounts() -> UnsafePointer<lws_http_mount>? {
        var next: UnsafePointer<lws_http_mount>?
        for mount in options.mounts.reversed() {
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
                    extraMimeTypes.map { (name: $0.suffix, value: $0.contentType) })
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
                m.pointee.origin = allocations.string(Self.httpProtocolName)
                m.pointee.origin_protocol = UInt8(LWSMPRO_CALLBACK.rawValue)
            }
            next = UnsafePointer(m)
        }
        return next
    }

    /// A `lws_protocol_vhost_options` linked list of name/value pairs, in order.
    private func makeNameValueList(_ pairs: [(name: String, value: String)])
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

/// C memory handed to libwebsockets structs: strdup'd strings and zeroed structs. Kept until
/// the context is destroyed, then freed together.
private struct CAllocations {
    private var pointers: [UnsafeMutableRawPointer] = []

    mutating func string(_ value: String) -> UnsafePointer<CChar> {
        let copy = strdup(value)!
        pointers.append(UnsafeMutableRawPointer(copy))
        return UnsafePointer(copy)
    }

    mutating func array<T>(of type: T.Type, count: Int) -> UnsafeMutablePointer<T> {
        let raw = calloc(count, MemoryLayout<T>.stride)!
        pointers.append(raw)
        return raw.bindMemory(to: T.self, capacity: count)
    }

    mutating func freeAll() {
        pointers.forEach { free($0) }
        pointers.removeAll()
    }
}
