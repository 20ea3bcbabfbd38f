/// A binary min-heap of `TickSchedule`'s entries that lie outside its wheel, earliest first
/// (by bucket key, then by when they were scheduled).
///
/// Lazy: an entry that is cancelled or moved stays in the heap and is recognised by its
/// `sequence` when it comes up (`TickSchedule` keeps the top current and compacts the heap
/// when most of it is stale).
struct TickHeap {
    struct Item {
        var key: Int64
        /// Which scheduling of the entry this is (`TickSchedule.Entry.sequence`).
        var sequence: UInt64
        var entry: Int32

        func precedes(_ other: Item) -> Bool {
            key != other.key ? key < other.key : sequence < other.sequence
        }
    }

    private(set) var items: [Item] = []

    var top: Item? { items.first }
    var count: Int { items.count }

    mutating func push(_ item: Item) {
        items.append(item)
        siftUp(items.count - 1)
    }

    mutating func popTop() {
        let last = items.removeLast()
        guard !items.isEmpty else { return }
        items[0] = last
        siftDown(0)
    }

    /// Keeps only the items `keep` says are current (a rebuild in linear time).
    mutating func compact(keeping keep: (Item) -> Bool) {
        items.removeAll { !keep($0) }
        var index = items.count / 2
        while index > 0 {
            index -= 1
            siftDown(index)
        }
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard items[child].precedes(items[parent]) else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < items.count && items[left].precedes(items[smallest]) { smallest = left }
            if right < items.count && items[right].precedes(items[smallest]) { smallest = right }
            guard smallest != parent else { break }
            items.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
