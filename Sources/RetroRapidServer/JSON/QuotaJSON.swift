import Foundation
import RetroRapidDomain

/// The player's free plays as both GET /api/v1/quota and the socket's `welcome`, `started`,
/// `gameOver` and `no_plays_left` send them (docs/API.md, docs/PROTOCOL.md): one shape.
/// `playsLeft` is always a number (the free plays left today); `unlimited` says whether they
/// limit the player at all.
struct QuotaJSON: JSONObjectEncoding {
    var status: QuotaStatus

    init(_ status: QuotaStatus) {
        self.status = status
    }

    func writeMembers<Sink: JSONMemberSink>(into sink: inout Sink) {
        sink.member("day", status.day)
        sink.member("dailyFreePlays", status.dailyFreePlays)
        sink.member("playsUsed", status.playsUsed)
        sink.member("playsLeft", status.playsLeft)
        sink.member("unlimited", status.unlimited)
        sink.member("resetsAt", status.resetsAt)
    }
}
