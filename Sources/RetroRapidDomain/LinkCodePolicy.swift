import Foundation

/// How long link codes live and how many a player may create (``LinkCodeRepository``).
public struct LinkCodePolicy: Sendable, Hashable {
    /// How long a code works after it is created (whole seconds count; at least 1).
    public let lifetime: TimeInterval
    /// How many codes one player may create within ``window``.
    public let maximumPerWindow: Int
    public let window: TimeInterval

    public init(lifetime: TimeInterval = 10 * 60, maximumPerWindow: Int = 5, window: TimeInterval = 10 * 60) {
        precondition(lifetime >= 1 && maximumPerWindow >= 1 && window >= 1, "link code lifetime, window and maximum must be positive")
        self.lifetime = lifetime
        self.maximumPerWindow = maximumPerWindow
        self.window = window
    }
}
