import Foundation
import RetroRapidDomain

/// ``ServiceSummaryRepository`` over either backend: one statement of four counts. Times are
/// stored as UTC text that sorts as it reads, so a day is a range of text.
public struct SQLServiceSummaryRepository: ServiceSummaryRepository {
    let executor: any SQLExecutor

    public init(executor: any SQLExecutor) {
        self.executor = executor
    }

    public func summary(of day: UTCDay) throws -> ServiceSummary {
        let start = UTCCivilTime.text(day.start), end = UTCCivilTime.text(day.end)
        guard let row = try executor.query("""
            SELECT (SELECT count(*) FROM players WHERE created_at >= $1 AND created_at < $2) AS new_players,
                   (SELECT count(*) FROM games WHERE ended_at >= $1 AND ended_at < $2) AS games_finished,
                   (SELECT count(*) FROM plays WHERE day = $3) AS plays_used,
                   (SELECT count(*) FROM orders WHERE status = 'paid' AND paid_at >= $1 AND paid_at < $2) AS orders_paid
            """, [start, end, day.text]).first
        else { throw StoreError.unreadable("the day's counts returned no row") }
        func count(_ column: String) throws -> Int {
            let value = try row.int64(column)
            guard value >= 0, value <= Int64(Int32.max) else {
                throw StoreError.unreadable("a count of \(value) for \(column) is out of range")
            }
            return Int(value)
        }
        return ServiceSummary(day: day, newPlayers: try count("new_players"), gamesFinished: try count("games_finished"),
                              playsUsed: try count("plays_used"), ordersPaid: try count("orders_paid"))
    }
}
