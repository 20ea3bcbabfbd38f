import RetroRapidSupport
import Synchronization

/// Where players reach each node's game connections straight (`cluster_nodes.game_url`), as
/// the last heartbeat read it: a refusal that names a node carries its URL, so the page goes
/// there without the site's front. A node missing here (no `--game-url`, or joined since the
/// last read) is reached through the front with `/ws?node=`, as without any.
///
/// Threading rule: written on the storage worker's completion (service thread), read on the
/// service thread when a refusal is sent; the lock keeps it safe to read from anywhere.
final class NodeDirectory: Sendable {
    private let urls = Mutex<[String: String]>([:])

    func gameURL(of nodeID: String) -> String? {
        urls.withLock { $0[nodeID] }
    }

    /// Takes the database's rows, keeping only URLs a node could have been started with: the
    /// database is another party, and these go to browsers.
    func replace(with fresh: [String: String]) {
        let checked = fresh.filter { GameURL($0.value)?.description == $0.value }
        urls.withLock { $0 = checked }
    }
}
