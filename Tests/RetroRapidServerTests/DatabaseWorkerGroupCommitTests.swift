import Dispatch
import Foundation
import RetroRapidDomain
import RetroRapidSQLite
import RetroRapidSupport
import Synchronization
import Testing
@testable import RetroRapidServer

/// Group commit on the storage thread, against a real SQLite file with a connection of the
/// test's own looking on: keyed jobs queued together share one transaction, each in its own
/// savepoint, and each completion comes only after the commit.
@Suite("DatabaseWorker group commit")
struct DatabaseWorkerGroupCommitTests {
    private struct JobFailed: Error, Equatable { let index: Int }

    /// What the completions saw, in the order they ran (on the service thread).
    private final class Answers: Sendable {
        struct Answer: Sendable, Equatable {
            let index: Int
            let succeeded: Bool
            let failedWith: Int?
            /// Rows named after this job that the test's own connection saw when the completion ran.
            let rowsSeen: Int
        }
        let all = Mutex<[Answer]>([])
        let done: DispatchSemaphore = DispatchSemaphore(value: 0)
    }

    private let harness: WorkerHarness
    private var worker: DatabaseWorker { harness.worker }
    private let path: String

    init() throws {
        harness = try WorkerHarness()
        path = harness.data.configuration().databasePath
        let table = DispatchSemaphore(value: 0)
        harness.worker.perform({ storage in
            try Self.database(storage).execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)")
        }, then: { _ in table.signal() })
        table.wait()
    }

    private static func database(_ storage: StorageContext) -> Database {
        (storage.connection as! SQLiteStorage).database
    }

    /// Holds the serial lane (the only one) until `open` is signalled, so what is queued
    /// meanwhile waits together.
    private func holdTheLane() -> DispatchSemaphore {
        let gate = DispatchSemaphore(value: 0)
        worker.perform({ _ in gate.wait() }, then: { _ in })
        return gate
    }

    /// A keyed job inserting row `job \(index)` in a repository-style transaction; job
    /// `failing` inserts and then throws. Its completion counts the row through `observer`.
    private func submit(_ index: Int, failing: Int? = nil, answers: Answers) {
        let path = self.path
        worker.perform(orderedBy: 7, { storage in
            try Self.database(storage).transaction(.immediate) { db in
                try db.prepare("INSERT INTO t (name) VALUES (?)").execute(["job \(index)"])
            }
            if index == failing { throw JobFailed(index: index) }
            return index
        }, then: { result in
            let observer = try? Database(path: path)
            let seen = (try? observer?.prepare("SELECT count(*) FROM t WHERE name = ?").query(["job \(index)"]) { $0.int(at: 0) }.first) ?? -1
            answers.all.withLock {
                $0.append(.init(index: index, succeeded: (try? result.get()) == index,
                                failedWith: (result.failure as? JobFailed)?.index, rowsSeen: seen))
            }
            answers.done.signal()
        })
    }

    private func wait(for count: Int, _ answers: Answers) throws {
        for _ in 0..<count {
            try #require(answers.done.wait(timeout: .now() + 10) == .success, "a completion did not come within 10 s")
        }
    }

    private func rows() throws -> [String] {
        try harness.data.database().prepare("SELECT name FROM t ORDER BY id").query { $0.string(at: 0) }
    }

    @Test func aFailingJobLosesOnlyItsOwnWorkAndEveryCompletionComesAfterTheCommit() throws {
        let answers = Answers()
        let before = worker.groupCommits
        let gate = holdTheLane()
        for index in 0..<5 { submit(index, failing: 2, answers: answers) }
        gate.signal()
        try wait(for: 5, answers)
        let all = answers.all.withLock { $0 }
        #expect(all.map(\.index) == [0, 1, 2, 3, 4])
        #expect(all.map(\.succeeded) == [true, true, false, true, true])
        #expect(all[2].failedWith == 2)
        // Each completion found its row already committed (the failed one found none).
        #expect(all.map(\.rowsSeen) == [1, 1, 0, 1, 1])
        #expect(try rows() == ["job 0", "job 1", "job 3", "job 4"])
        // And they shared one transaction.
        let after = worker.groupCommits
        #expect(after.groups - before.groups == 1)
        #expect(after.jobs - before.jobs == 5)
    }

    @Test func ordersAreKeptAcrossGroupsAndAJobThatIsNotGroupableRunsAlone() throws {
        let answers = Answers()
        let before = worker.groupCommits
        let gate = holdTheLane()
        for index in 0..<10 { submit(index, answers: answers) }
        // A plain job in the middle: it runs alone, between two groups.
        let path = self.path
        worker.perform({ storage in
            try Self.database(storage).prepare("INSERT INTO t (name) VALUES ('plain')").execute()
        }, then: { _ in
            let seen = (try? Database(path: path).prepare("SELECT count(*) FROM t WHERE name = 'plain'").query { $0.int(at: 0) }.first) ?? nil
            answers.all.withLock { $0.append(.init(index: -1, succeeded: true, failedWith: nil, rowsSeen: seen ?? -1)) }
            answers.done.signal()
        })
        for index in 10..<150 { submit(index, answers: answers) }
        gate.signal()
        try wait(for: 151, answers)
        let all = answers.all.withLock { $0 }
        #expect(all.map(\.index) == Array(0..<10) + [-1] + Array(10..<150))
        #expect(all.allSatisfy { $0.succeeded && $0.rowsSeen == 1 })
        #expect(try rows() == (0..<10).map { "job \($0)" } + ["plain"] + (10..<150).map { "job \($0)" })
        // 10 jobs, then the plain one alone, then 140 in groups of at most 64: 64, 64, 12.
        let after = worker.groupCommits
        #expect(after.groups - before.groups == 4)
        #expect(after.jobs - before.jobs == 150)
    }

    @Test func aGroupThatFailsAsAWholeRunsEachJobAgainAloneAndLosesOrDoublesNothing() throws {
        let answers = Answers()
        let before = worker.groupCommits
        let gate = holdTheLane()
        submit(0, answers: answers)
        // Ends the shared transaction, as SQLite does on its own after a disk-full or I/O error;
        // alone it has no transaction to end and fails.
        worker.perform(orderedBy: 7, { storage in
            try Self.database(storage).execute(sql: "ROLLBACK")
        }, then: { result in
            answers.all.withLock { $0.append(.init(index: -1, succeeded: result.failure == nil, failedWith: nil, rowsSeen: 0)) }
            answers.done.signal()
        })
        submit(2, answers: answers)
        gate.signal()
        try wait(for: 3, answers)
        let all = answers.all.withLock { $0 }
        #expect(all.map(\.index) == [0, -1, 2])
        #expect(all.map(\.succeeded) == [true, false, true])
        #expect(all[0].rowsSeen == 1 && all[2].rowsSeen == 1)
        #expect(try rows() == ["job 0", "job 2"])
        #expect(worker.groupCommits.groups == before.groups)
    }

    @Test func aShutdownRunsAndAnswersEveryQueuedJob() throws {
        let answers = Answers()
        let gate = holdTheLane()
        for index in 0..<100 { submit(index, answers: answers) }
        gate.signal()
        worker.shutdown()
        try wait(for: 100, answers)
        #expect(answers.all.withLock { $0 }.map(\.index) == Array(0..<100))
        #expect(answers.all.withLock { $0 }.allSatisfy { $0.succeeded && $0.rowsSeen == 1 })
        #expect(try rows().count == 100)
    }
}
