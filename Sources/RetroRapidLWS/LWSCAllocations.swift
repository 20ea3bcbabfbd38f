#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// C memory handed to libwebsockets structs: strdup'd strings and zeroed structs. Kept until
/// the context is destroyed, then freed together (libwebsockets keeps pointers into the
/// creation info, the protocol list and the mounts for the context's whole life).
struct LWSCAllocations {
    private var pointers: [UnsafeMutableRawPointer] = []

    mutating func string(_ value: String) -> UnsafePointer<CChar> {
        let copy = strdup(value)!
        pointers.append(UnsafeMutableRawPointer(copy))
        return UnsafePointer(copy)
    }

    mutating func array<T>(of type: T.Type, count: Int) -> UnsafeMutablePointer<T> {
        let raw = calloc(count, MemoryLayout<T>.stride)!
        pointers.append(raw)
        return raw.bindMemory(to: T.self, capacity: count)
    }

    mutating func freeAll() {
        pointers.forEach { free($0) }
        pointers.removeAll()
    }
}
