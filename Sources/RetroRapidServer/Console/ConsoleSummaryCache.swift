import Foundation
import RetroRapidDomain
import Synchronization

/// Today's counts for the console's overview, kept for a minute: the games of a day are
/// counted by a scan, so however many operators keep the overview open, the database is
/// asked at most once a minute by each node.
///
/// Threading: any thread (one lock); `summary` on a storage thread, which it reads from.
final class ConsoleSummaryCache: Sendable {
    static let lifetime: TimeInterval = 60

    private let kept = Mutex<(at: Date, summary: ServiceSummary)?>(nil)

    func summary(_ storage: StorageContext, now: Date) throws -> ServiceSummary {
        let day = UTCDay(containing: now)
        if let kept = kept.withLock({ $0 }), kept.summary.day == day,
           now >= kept.at, now.timeIntervalSince(kept.at) < Self.lifetime {
            return kept.summary
        }
        let summary = try storage.summaries.summary(of: day)
        kept.withLock { $0 = (now, summary) }
        return summary
    }
}
