import Dispatch
import Synchronization
import Testing
@testable import RetroRapidServer

@Suite("ServiceMailbox")
struct ServiceMailboxTests {
    /// A bare context on a loopback port with the given mailbox.
    private func startContext(_ mailbox: ServiceMailbox, root: TemporaryWebRoot) throws -> LWSContext {
        let context = LWSContext(options: LWSContextOptions(
            address: "127.0.0.1", port: 0,
            mounts: [.files(mountpoint: "/", directory: root.url.path, defaultFile: "index.html", extraMimeTypes: [])],
            responseHeaders: [], httpHandler: { _, responder in responder.respond(.json("{}")) }), mailbox: mailbox)
        _ = try context.start()
        return context
    }

    @Test func jobsPostedFromOtherThreadsRunOnTheServiceThreadInOrder() throws {
        let root = try TemporaryWebRoot()
        let mailbox = ServiceMailbox()
        let context = try startContext(mailbox, root: root)
        let log = Mutex<[(Int, Bool)]>([])
        let done = DispatchSemaphore(value: 0)
        for index in 0..<500 {
            mailbox.post {
                log.withLock { $0.append((index, context.isServiceThread)) }
                if index == 499 { done.signal() }
            }
        }
        #expect(done.wait(timeout: .now() + 5) == .success)
        context.stop()
        let entries = log.withLock { $0 }
        #expect(entries.map(\.0) == Array(0..<500))
        #expect(entries.allSatisfy { $0.1 })
    }

    @Test func everyJobPostedByManyThreadsAtOnceRunsExactlyOnce() throws {
        let root = try TemporaryWebRoot()
        let mailbox = ServiceMailbox()
        let context = try startContext(mailbox, root: root)
        let seen = Mutex<[Int: Int]>([:])
        let group = DispatchGroup()
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for index in 0..<250 {
                group.enter()
                mailbox.post {
                    seen.withLock { $0[thread * 1000 + index, default: 0] += 1 }
                    group.leave()
                }
            }
        }
        #expect(group.wait(timeout: .now() + 5) == .success)
        context.stop()
        let counts = seen.withLock { $0 }
        #expect(counts.count == 2000)
        #expect(counts.values.allSatisfy { $0 == 1 })
    }

    @Test func jobsPostedBeforeTheContextStartsRunOnceItDoes() throws {
        let mailbox = ServiceMailbox()
        let ran = Mutex<Bool?>(nil)
        let done = DispatchSemaphore(value: 0)
        let box = Mutex<LWSContext?>(nil)
        mailbox.post {
            ran.withLock { $0 = box.withLock { $0 }?.isServiceThread }
            done.signal()
        }
        #expect(mailbox.pendingCount == 1)
        let context = LWSContext(options: LWSContextOptions(
            address: "127.0.0.1", port: 0, mounts: [], responseHeaders: [],
            httpHandler: { _, responder in responder.respond(.json("{}")) }), mailbox: mailbox)
        box.withLock { $0 = context }
        _ = try context.start()
        #expect(done.wait(timeout: .now() + 5) == .success)
        context.stop()
        box.withLock { $0 = nil }
        #expect(ran.withLock { $0 } == true)
    }

    @Test func jobsStillQueuedWhenTheContextStopsRunBeforeItIsDestroyed() throws {
        let root = try TemporaryWebRoot()
        let mailbox = ServiceMailbox()
        let context = try startContext(mailbox, root: root)
        let count = Mutex(0)
        let allPosted = DispatchSemaphore(value: 0)
        // The first job holds the service thread until the rest are posted, then asks the
        // loop to stop: the rest are still queued when it ends.
        mailbox.post {
            allPosted.wait()
            context.stop()
        }
        for _ in 0..<100 { mailbox.post { count.withLock { $0 += 1 } } }
        allPosted.signal()
        context.wait()
        #expect(count.withLock { $0 } == 100)
        #expect(mailbox.pendingCount == 0)
    }
}
