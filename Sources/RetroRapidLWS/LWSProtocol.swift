/// A libwebsockets protocol, in Swift terms.
public struct LWSProtocol {
    public var name: String
    public var callback: LWSProtocolCallback
    /// Passed to `callback` (unretained: whoever made the context keeps it alive longer).
    public var owner: UnsafeMutableRawPointer?
    /// Bytes of zeroed per-connection memory libwebsockets gives the callback as `user`.
    public var perSessionDataSize: Int
    /// Largest piece of a message handed to one RECEIVE callback; 0 for the default (4096).
    public var rxBufferSize: Int
    /// Most bytes of one `lws_write` handed to the socket at once (the rest is buffered and
    /// sent on later WRITEABLEs); 0 for `rxBufferSize`'s value, libwebsockets' default.
    public var txPacketSize: Int
    /// The protocol for clients that ask for no subprotocol (the vhost's "default" option).
    public var isDefault: Bool
    /// The vhost's keepalive (`retry_and_idle_policy`): a PING after `pingSeconds` of silence,
    /// a hang-up when no PONG came within `hangupSeconds`; (0, 0) turns libwebsockets' own
    /// keepalive off (nil leaves its 5-minute default on).
    public var keepalive: (pingSeconds: Int, hangupSeconds: Int)?

    public init(name: String, callback: @escaping LWSProtocolCallback, owner: UnsafeMutableRawPointer?,
                perSessionDataSize: Int = 0, rxBufferSize: Int = 0, txPacketSize: Int = 0, isDefault: Bool = false,
                keepalive: (pingSeconds: Int, hangupSeconds: Int)? = nil) {
        self.name = name
        self.callback = callback
        self.owner = owner
        self.perSessionDataSize = perSessionDataSize
        self.rxBufferSize = rxBufferSize
        self.txPacketSize = txPacketSize
        self.isDefault = isDefault
        self.keepalive = keepalive
    }
}
