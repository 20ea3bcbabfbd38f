import RetroRapidLWS
import RetroRapidSupport
import Synchronization

/// What an `LWSContext` listens on and serves, in Swift terms. `LWSNativeContext` turns it into
/// the C structs libwebsockets wants and keeps them alive for the context's whole life.
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
    var clientAddresses = ClientAddressResolver.direct
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
    // @unchecked: `callback` is a function that captures nothing; `owner` is only reached from
    // the service thread's callbacks.
    typealias Callback = LWSProtocolCallback
    var name: String
    var callback: Callback
    /// Bytes of zeroed per-connection memory libwebsockets gives the callback as `user`.
    var perSessionDataSize: Int
    /// Largest piece of a message handed to one RECEIVE callback; 0 for the default (4096).
    var rxBufferSize: Int = 0
    /// Most bytes of one `lws_write` handed to the socket at once; 0 for `rxBufferSize`'s value.
    var txPacketSize: Int = 0
    /// Handed to the callback as its `owner` (unretained: the definition, kept in the
    /// context's options, holds it for the context's whole life).
    var owner: (any AnyObject & Sendable)? = nil
    /// The protocol for clients that ask for no subprotocol (the vhost's "default" option).
    var isDefault: Bool = false
    /// When set, `protocols[0]`'s callback in place of `lwsHTTPCallback` (WebSocket side):
    /// libwebsockets asks only protocols[0] to confirm an upgrade (HTTP_CONFIRM_UPGRADE), so this
    /// answers that reason and passes every other one to `lwsHTTPCallback` unchanged. Its owner
    /// is the `LWSContext`, like `lwsHTTPCallback`'s.
    var httpCallback: Callback? = nil
    /// The vhost's keepalive (`retry_and_idle_policy`, WebSocket side): a PING after
    /// `pingSeconds` of silence, a hang-up when no PONG came within `hangupSeconds`; (0, 0)
    /// turns libwebsockets' own keepalive off (nil leaves its 5-minute default on).
    var keepalive: (pingSeconds: Int, hangupSeconds: Int)? = nil

    /// The protocol as `LWSNativeContext` takes it.
    var native: LWSProtocol {
        LWSProtocol(name: name, callback: callback, owner: owner.map { Unmanaged.passUnretained($0).toOpaque() },
                    perSessionDataSize: perSessionDataSize, rxBufferSize: rxBufferSize, txPacketSize: txPacketSize,
                    isDefault: isDefault,
                    keepalive: keepalive)
    }
}

/// The server's libwebsockets context: one `LWSNativeContext` on its `LWSServiceThread`, with
/// what the HTTP side keeps per context: the mailbox into the service thread, the live
/// exchanges, per-address connection counts, request deadlines and the open-connection count.
///
/// Threading rule: the service thread (`LWSServiceThread`) makes every libwebsockets call and
/// runs every callback; other threads may only call `stop()`/`wait()`, post to the `mailbox`,
/// ask a `responder` to answer, and read the atomics (`openConnectionCount`, `isAccepting`).
final class LWSContext: @unchecked Sendable {
    // @unchecked: the exchange table, the tracker and the admitted requests are touched only
    // by the service thread (and read by tests after `wait()`); everything else shared is a
    // Mutex, Atomic or let.

    let options: LWSContextOptions
    /// The name of our one HTTP protocol; callback mounts name it as their origin.
    static let httpProtocolName = "retrorapid-http"
    /// How other threads hand work to the service thread. Drained by `protocols[0]`'s callback
    /// on LWS_CALLBACK_EVENT_WAIT_CANCELLED, and once more before the context is destroyed.
    let mailbox: ServiceMailbox

    private let thread = LWSServiceThread(threadName: "rr-service")
    /// New connections are accepted until shutdown begins (`stopAccepting`).
    private let accepting = Atomic<Bool>(true)
    private let connections = Atomic<Int>(0)

    /// Service thread only: the live HTTP exchanges.
    let exchanges = HTTPExchangeTable()
    /// Service thread only: per-address connection counts and request clocks, by connection.
    var connectionTracker: HTTPConnectionTracker<LWSConnection>
    /// Service thread only: requests whose head `LWS_CALLBACK_FILTER_HTTP_CONNECTION` admitted,
    /// until LWS_CALLBACK_HTTP takes them (file requests never come for theirs; the next
    /// request or the connection's end replaces them).
    var admittedRequests: [LWSConnection: (request: HTTPRequest, bodyLength: Int)] = [:]
    /// Fires at the deadline of each request still receiving its body (ids are exchange ids).
    /// Kept armed at most a second ahead (see `TickScheduler.maximumSleep`): an idle server
    /// wakes once a second for it.
    private let requestDeadlines = TickScheduler(granularityMicroseconds: 100_000, maximumSleepMicroseconds: 1_000_000)

    init(options: LWSContextOptions, mailbox: ServiceMailbox = ServiceMailbox()) {
        self.options = options
        self.mailbox = mailbox
        connectionTracker = HTTPConnectionTracker(maxConnectionsPerAddress: options.requestLimits.maxConnectionsPerIP)
    }

    /// Creates the service thread and blocks until the vhost is listening or has failed.
    /// Returns the bound port (the kernel's choice when `options.port` is 0).
    func start() throws(LWSContextError) -> Int {
        try thread.start(LWSServiceThread.Hooks(
            create: { [self] in LWSNativeContext.create(nativeOptions()) },
            started: { [self] native in
                requestDeadlines.onDue = { [unowned self] id, _ in requestDeadlinePassed(id) }
                requestDeadlines.attach(context: native.pointer)
                mailbox.attach(native.waker)
            },
            stopping: { [self] in
                // Jobs posted until now run while every connection still exists; later ones
                // wait for a next context (a restart) and are dropped with the mailbox otherwise.
                mailbox.detach()
                mailbox.drainAll()
                requestDeadlines.detach()  // before the context frees its timer lists
            }))
    }

    /// Asks the service loop to end and waits until the context is destroyed. Safe from any
    /// thread, any number of times. Called on the service thread itself (from a handler), it
    /// only asks, because waiting there would deadlock.
    func stop() {
        thread.stop()
    }

    /// Blocks until the service thread has destroyed the context, and joins it. On the service
    /// thread itself it returns at once.
    func wait() {
        thread.wait()
    }

    /// Whether the calling thread is this context's service thread.
    var isServiceThread: Bool {
        thread.isServiceThread
    }

    /// Service thread, after the mailbox is drained on LWS_CALLBACK_EVENT_WAIT_CANCELLED.
    func serviceWoken() {
        thread.serviceWoken()
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
    var openExchangeCount: Int { exchanges.count }

    /// Answers that came for an exchange already gone (its client left): for tests and logs.
    var droppedAnswerCount: Int { exchanges.droppedAnswerCount }

    /// The exchange's body must be in by `deadline` (monotonic microseconds), or it is
    /// answered 408 (`requestDeadlinePassed`).
    func scheduleBodyDeadline(_ exchange: HTTPExchange, at deadline: Int64) {
        requestDeadlines.schedule(Int(exchange.id), at: deadline)
    }

    /// Service thread, from the deadline timer: a request still receiving its body is answered
    /// 408 and its connection closed once the answer is out (on the next WRITEABLE).
    private func requestDeadlinePassed(_ id: Int) {
        guard let exchange = exchanges.exchange(id: UInt64(id)), exchange.expectsBody,
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
        exchange.connection.requestWriteable()
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
        guard let exchange = exchanges.exchange(id: id) else {
            exchanges.answerDropped()
            return
        }
        guard exchange.answer == nil, !exchange.responseStarted else { return }
        exchange.answer = response
        if !exchange.handlerRunning {
            exchange.connection.requestWriteable()
        }
    }

    // MARK: - Service thread

    /// What `LWSNativeContext` creates: our HTTP protocol first (also the vhost's HTTP
    /// protocol; it keeps no per-connection memory, exchanges live in the table), then the
    /// WebSocket side's.
    private func nativeOptions() -> LWSNativeContext.Options {
        // WebSocket side: a protocol may wrap the HTTP callback to confirm upgrades.
        let http = LWSProtocol(name: Self.httpProtocolName,
                               callback: options.protocols.lazy.compactMap(\.httpCallback).first ?? lwsHTTPCallback,
                               owner: Unmanaged.passUnretained(self).toOpaque())
        return LWSNativeContext.Options(
            protocols: [http] + options.protocols.map(\.native),
            usesLibev: options.eventLoop == .libev,
            listen: LWSNativeContext.Listen(
                address: options.address, port: options.port, mounts: options.mounts,
                responseHeaders: options.responseHeaders, vhostName: "retrorapid", serverString: "RetroRapid",
                // Room for a head above our own limits, so a client meets those, with their
                // answers (LWSHTTPConnection.swift), rather than libwebsockets' silent drop at
                // 4096 bytes.
                headerBufferBytes: options.requestLimits.headerBufferBytes,
                headerTimeoutSeconds: options.requestLimits.headerTimeoutSeconds,
                tlsCertificatePath: options.tlsCertificatePath, tlsPrivateKeyPath: options.tlsPrivateKeyPath))
    }
}
