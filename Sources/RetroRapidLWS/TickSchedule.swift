/// Which games are due when: absolute deadlines grouped in buckets of `granularity`
/// microseconds, so thousands of games cost one timer, not one each (docs/LIBWEBSOCKETS-4.1.6.md: 4.1.6
/// keeps its timers in a sorted list and walks it on every insert).
///
/// Each id has at most one deadline; scheduling it again replaces the old one. A bucket comes
/// due at its end, so nothing is ever taken before its deadline; buckets are taken earliest
/// first, and each id once. Pure: the caller says what time it is.
///
/// Every step of every game passes here, so no dictionary and no allocation once
/// warm: each id's entry is found through `TickIDTable`; the buckets from `base` on, as far as
/// `wheelSlots` of them, are a timing wheel (a list per bucket, a bitmap of the buckets in use);
/// a deadline beyond the wheel (a checkpoint, a player's grace to reconnect) waits in the `far`
/// heap until the wheel reaches it, and one in a bucket the wheel has passed already (a game
/// behind its deadlines) is in the `late` heap, due at once.
public struct TickSchedule {
    public let granularity: Int64

    private enum Place: UInt8 { case free, wheel, late, far }

    private struct Entry {
        var id: Int
        var key: Int64
        /// Which scheduling this is: tells a heap's stale items from the current one, and
        /// orders a bucket's ids in the heaps as the wheel's lists do (by when scheduled).
        var sequence: UInt64
        /// The wheel's list of the bucket; `next` also chains free entries.
        var previous: Int32
        var next: Int32
        var place: Place
    }

    private var entries: [Entry] = []
    private var freeEntry: Int32 = -1
    private var table = TickIDTable()
    private var sequence: UInt64 = 0

    /// The first bucket key of the wheel: the wheel holds the buckets `base ..< base + wheelSlots`,
    /// each in slot `key & slotMask`; everything before `base` was taken or is in `late`,
    /// everything after the wheel is in `far`.
    private var base: Int64 = 0
    private let slotMask: Int
    private var heads: [Int32]
    private var tails: [Int32]
    /// One bit per slot: its list is not empty.
    private var used: [UInt64]
    private var wheelCount = 0
    private var late = TickHeap()
    private var lateCount = 0
    private var far = TickHeap()
    private var farCount = 0

    /// - Parameter wheelSlots: how many buckets ahead the wheel holds (a power of two, 64 or
    ///   more); the default is a second ahead at 1 ms, more than any step interval.
    public init(granularityMicroseconds: Int64 = 1000, wheelSlots: Int = 1024) {
        precondition(granularityMicroseconds > 0, "granularity must be positive")
        precondition(wheelSlots >= 64 && wheelSlots & (wheelSlots - 1) == 0, "wheelSlots must be a power of two, 64 or more")
        granularity = granularityMicroseconds
        slotMask = wheelSlots - 1
        heads = Array(repeating: -1, count: wheelSlots)
        tails = Array(repeating: -1, count: wheelSlots)
        used = Array(repeating: 0, count: wheelSlots / 64)
    }

    /// Ids with a deadline.
    public var count: Int { table.count }

    /// When the earliest bucket comes due (the end of that bucket), if any.
    public var nextDue: Int64? {
        // Every late key is before the wheel's, every wheel key before the far ones.
        if let top = late.top { return top.key * granularity }
        if let key = firstWheelKey() { return key * granularity }
        return far.top.map { $0.key * granularity }
    }

    /// Makes `deadline` the one deadline of `id`.
    public mutating func schedule(_ id: Int, at deadline: Int64) {
        // Rounded up: a bucket is due at its end, so it never fires before a deadline in it.
        let key = deadline >= 0 ? (deadline + granularity - 1) / granularity : deadline / granularity
        let entry: Int32
        if let existing = table.entry(of: id) {
            if entries[Int(existing)].key == key { return }
            unplace(existing)
            entry = existing
        } else {
            entry = newEntry(id)
            table.insert(id, entry: entry)
        }
        entries[Int(entry)].key = key
        place(entry)
    }

    public mutating func cancel(_ id: Int) {
        guard let entry = table.entry(of: id) else { return }
        unplace(entry)
        table.remove(id)
        freeEntry(entry)
    }

    /// Removes and returns the ids due by `now`, earliest bucket first, each id once.
    public mutating func takeDue(now: Int64) -> [Int] {
        var due: [Int] = []
        takeDue(now: now, into: &due)
        return due
    }

    /// Appends the ids due by `now` to `due`, earliest bucket first, each id once: the timer
    /// passes the same array every time, so taking allocates nothing.
    public mutating func takeDue(now: Int64, into due: inout [Int]) {
        // The last bucket due: key * granularity <= now, without the multiplication's overflow
        // (and one short of Int64.max, so that `base` can always move past it).
        let limit = min(now >= 0 ? now / granularity : -((-(now + 1)) / granularity) - 1, Int64.max - 1)
        while let top = late.top, top.key <= limit {
            late.popTop()
            lateCount -= 1
            take(top.entry, into: &due)
            cleanTop(of: .late)
        }
        while base <= limit {
            if let key = firstWheelKey(), key <= limit {
                takeBucket(key, into: &due)
                base = key + 1
            } else if let top = far.top, top.key <= limit {
                base = top.key  // the wheel is empty: it jumps to the earliest far bucket
            } else {
                base = limit + 1
            }
            moveFarIntoWheel()
        }
    }

    // MARK: - Entries

    private mutating func newEntry(_ id: Int) -> Int32 {
        let fresh = Entry(id: id, key: 0, sequence: 0, previous: -1, next: -1, place: .free)
        guard freeEntry >= 0 else {
            entries.append(fresh)
            return Int32(entries.count - 1)
        }
        let entry = freeEntry
        freeEntry = entries[Int(entry)].next
        entries[Int(entry)] = fresh
        return entry
    }

    private mutating func freeEntry(_ entry: Int32) {
        entries[Int(entry)].place = .free
        entries[Int(entry)].next = freeEntry
        freeEntry = entry
    }

    private mutating func take(_ entry: Int32, into due: inout [Int]) {
        let id = entries[Int(entry)].id
        due.append(id)
        table.remove(id)
        freeEntry(entry)
    }

    /// Puts the entry where its `key` belongs, as the latest scheduled in its bucket.
    private mutating func place(_ entry: Int32) {
        sequence += 1
        entries[Int(entry)].sequence = sequence
        let key = entries[Int(entry)].key
        // Nothing anywhere: the wheel may start at this bucket.
        if wheelCount == 0 && lateCount == 0 && farCount == 0 { base = key }
        if key < base {
            entries[Int(entry)].place = .late
            late.push(TickHeap.Item(key: key, sequence: sequence, entry: entry))
            lateCount += 1
        } else if UInt64(bitPattern: key &- base) <= UInt64(slotMask) {
            appendToWheel(entry)
        } else {
            entries[Int(entry)].place = .far
            far.push(TickHeap.Item(key: key, sequence: sequence, entry: entry))
            farCount += 1
        }
    }

    /// Takes the entry out of wherever it is (a heap's item of it goes stale).
    private mutating func unplace(_ entry: Int32) {
        switch entries[Int(entry)].place {
        case .wheel:
            let previous = entries[Int(entry)].previous, next = entries[Int(entry)].next
            let slot = Int(entries[Int(entry)].key) & slotMask
            if previous >= 0 { entries[Int(previous)].next = next } else { heads[slot] = next }
            if next >= 0 { entries[Int(next)].previous = previous } else { tails[slot] = previous }
            if heads[slot] < 0 { used[slot >> 6] &= ~(1 << UInt64(slot & 63)) }
            wheelCount -= 1
        case .late:
            entries[Int(entry)].place = .free
            lateCount -= 1
            cleanTop(of: .late)
        case .far:
            entries[Int(entry)].place = .free
            farCount -= 1
            cleanTop(of: .far)
        case .free:
            break
        }
    }

    // MARK: - The wheel

    private mutating func appendToWheel(_ entry: Int32) {
        let slot = Int(entries[Int(entry)].key) & slotMask
        let tail = tails[slot]
        entries[Int(entry)].place = .wheel
        entries[Int(entry)].previous = tail
        entries[Int(entry)].next = -1
        if tail >= 0 {
            entries[Int(tail)].next = entry
        } else {
            heads[slot] = entry
            used[slot >> 6] |= 1 << UInt64(slot & 63)
        }
        tails[slot] = entry
        wheelCount += 1
    }

    /// The earliest bucket on the wheel: the first slot in use from `base`'s on, round the wheel.
    private func firstWheelKey() -> Int64? {
        guard wheelCount > 0 else { return nil }
        let start = Int(truncatingIfNeeded: base) & slotMask
        let words = used.count
        var index = start >> 6
        var word = used[index] & (UInt64.max << UInt64(start & 63))
        while word == 0 {
            // Round once: back at the first word, its bits before `start` are the wheel's last buckets.
            index = (index + 1) & (words - 1)
            word = used[index]
        }
        let slot = index << 6 | word.trailingZeroBitCount
        return base + Int64((slot - start) & slotMask)
    }

    private mutating func takeBucket(_ key: Int64, into due: inout [Int]) {
        let slot = Int(truncatingIfNeeded: key) & slotMask
        var entry = heads[slot]
        while entry >= 0 {
            let next = entries[Int(entry)].next
            take(entry, into: &due)
            wheelCount -= 1
            entry = next
        }
        heads[slot] = -1
        tails[slot] = -1
        used[slot >> 6] &= ~(1 << UInt64(slot & 63))
    }

    /// After `base` moved on: far entries the wheel now reaches go onto it, in their order.
    private mutating func moveFarIntoWheel() {
        while let top = far.top, UInt64(bitPattern: top.key &- base) <= UInt64(slotMask) {
            far.popTop()
            farCount -= 1
            appendToWheel(top.entry)
            cleanTop(of: .far)
        }
    }

    // MARK: - The heaps

    /// Pops stale items until the heap's top is current, and rebuilds a heap gone mostly stale:
    /// so `top` is always an entry that is there, and a heap stays in proportion to its entries.
    private mutating func cleanTop(of place: Place) {
        if place == .late {
            while let top = late.top, !Self.isCurrent(top, in: .late, entries) { late.popTop() }
            if late.count > 64 && late.count > 4 * lateCount {
                let entries = entries
                late.compact { Self.isCurrent($0, in: .late, entries) }
            }
        } else {
            while let top = far.top, !Self.isCurrent(top, in: .far, entries) { far.popTop() }
            if far.count > 64 && far.count > 4 * farCount {
                let entries = entries
                far.compact { Self.isCurrent($0, in: .far, entries) }
            }
        }
    }

    private static func isCurrent(_ item: TickHeap.Item, in place: Place, _ entries: [Entry]) -> Bool {
        let entry = entries[Int(item.entry)]
        return entry.place == place && entry.sequence == item.sequence
    }
}
