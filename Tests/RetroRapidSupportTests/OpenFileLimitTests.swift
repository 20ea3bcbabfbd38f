#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@testable import RetroRapidSupport
import Testing

/// The open-file limit the kernel reports, turned into a count of sockets.
@Suite struct OpenFileLimitTests {
    @Test func anUnlimitedOrHugeLimitBecomesACountInsteadOfTrapping() {
        #expect(OpenFileLimit.count(rlim_t.max) == Int(Int32.max))  // RLIM_INFINITY
        #expect(OpenFileLimit.count(rlim_t.max - 1) == Int(Int32.max))
        #expect(UInt32(exactly: OpenFileLimit.count(rlim_t.max)) != nil)  // libwebsockets' fd_limit_per_thread
        #expect(OpenFileLimit.count(20_000) == 20_000)
        #expect(OpenFileLimit.count(0) == 0)
    }

    @Test func raisingReportsTheSoftLimitNow() {
        var limit = rlimit()
        #expect(getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0)
        let raised = OpenFileLimit.raiseToHardLimit()
        #expect(raised >= OpenFileLimit.count(limit.rlim_cur))
        #expect(raised <= Int(Int32.max))
    }
}
