/// Where each id's entry is in `TickSchedule`: an open-addressing hash table from `Int` ids to
/// entry indexes, linear probing, Fibonacci hashing.
///
/// Instead of `[Int: Int32]` because every step of every game looks its id up here: the ids are
/// match ids counting up from 1 (and a few negative ones), which a multiply-and-shift spreads
/// evenly, where `Dictionary` hashes each with SipHash. Kept at most half full;
/// removal shifts the entries behind back, so there are no tombstones.
struct TickIDTable {
    private struct Slot {
        var id: Int
        /// -1: empty.
        var entry: Int32
    }

    private var slots: [Slot]
    private var mask: Int
    /// 64 − log2(slots.count): which bits of the product are the index.
    private var shift: UInt64
    private(set) var count = 0

    init() {
        slots = Array(repeating: Slot(id: 0, entry: -1), count: 16)
        mask = 15
        shift = 60
    }

    private func home(_ id: Int) -> Int {
        Int(truncatingIfNeeded: (UInt64(bitPattern: Int64(id)) &* 0x9E37_79B9_7F4A_7C15) >> shift)
    }

    /// The entry of `id`, if it has one.
    func entry(of id: Int) -> Int32? {
        var index = home(id)
        while true {
            let slot = slots[index]
            if slot.entry < 0 { return nil }
            if slot.id == id { return slot.entry }
            index = (index + 1) & mask
        }
    }

    /// Records `entry` for `id`, which must have none.
    mutating func insert(_ id: Int, entry: Int32) {
        if (count + 1) * 2 > slots.count { grow() }
        var index = home(id)
        while slots[index].entry >= 0 { index = (index + 1) & mask }
        slots[index] = Slot(id: id, entry: entry)
        count += 1
    }

    /// Forgets `id` (nothing when it has no entry).
    mutating func remove(_ id: Int) {
        var index = home(id)
        while true {
            let slot = slots[index]
            if slot.entry < 0 { return }
            if slot.id == id { break }
            index = (index + 1) & mask
        }
        // Backward shift: each later slot of the run moves into the hole unless its home lies
        // after the hole (cyclically), so every id stays reachable from its home.
        var hole = index
        var next = (index + 1) & mask
        while slots[next].entry >= 0 {
            let distanceFromHome = (next - home(slots[next].id)) & mask
            if distanceFromHome >= (next - hole) & mask {
                slots[hole] = slots[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        slots[hole].entry = -1
        count -= 1
    }

    private mutating func grow() {
        let old = slots
        slots = Array(repeating: Slot(id: 0, entry: -1), count: old.count * 2)
        mask = slots.count - 1
        shift -= 1
        count = 0
        for slot in old where slot.entry >= 0 { insert(slot.id, entry: slot.entry) }
    }
}
