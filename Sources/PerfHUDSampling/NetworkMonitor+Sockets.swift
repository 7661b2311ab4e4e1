/// How a pass reads the TCP sockets of one namespace for the targets in it: by a dump of every
/// socket of the namespace where a target holds a socket not sorted out yet (one made since the
/// last dump), else by looking up each of the targets' known sockets by its id. A dump walks every
/// socket of the namespace (16.8 ms a pass at 20,000 sockets on the host, `Benchmarks/net_cost.py`);
/// a look-up costs a hash probe (about 3 µs), so a target with steady connections costs with its
/// own sockets, not the host's.
extension NetworkMonitor {
    func readSockets(of namespace: NetworkNamespace, inodeOwners: [UInt64: [ObjectIdentifier]], owners: [ObjectIdentifier]) {
        // Catch up on the sockets that closed before this read, so none is counted twice.
        namespace.drainDestroyEvents(into: buffer) { closed($0, in: namespace) }
        let needsDump = inodeOwners.contains { inode, holders in
            holders.contains { owner in
                guard let state = states[owner] else { return false }
                return state.tcpInodes[inode] == nil && !state.udpInodes.contains(inode) && !state.otherInodes.contains(inode)
            }
        }
        if needsDump { dump(namespace, inodeOwners: inodeOwners, owners: owners) } else { lookUp(namespace, owners: owners) }
        for owner in owners {
            guard let state = states[owner] else { continue }
            state.udpSockets = state.inodes.reduce(0) { $0 + (state.udpInodes.contains($1) ? 1 : 0) }
        }
    }

    private func dump(_ namespace: NetworkNamespace, inodeOwners: [UInt64: [ObjectIdentifier]], owners: [ObjectIdentifier]) {
        // Who a socket known by its cookie belongs to: the map the last pass made for destroy events.
        let cookieOwners = namespace.cookieOwners
        for owner in owners { states[owner]?.sockets[namespace.identity] = [:] }
        let failure = namespace.dump.dump(states: InetDiag.connectedStates | InetDiag.listeningStates) { socket in
            if let holders = inodeOwners[socket.inode] {
                for owner in holders {
                    guard let state = states[owner] else { continue }
                    state.tcpInodes[socket.inode] = socket.cookie
                    state.sockets[namespace.identity, default: [:]][socket.cookie] = socket
                    state.accounting.see(socket)
                }
            } else if let holders = cookieOwners[socket.cookie] {
                for owner in holders {
                    states[owner]?.sockets[namespace.identity, default: [:]][socket.cookie] = socket
                    states[owner]?.accounting.see(socket)
                }
            }
        }
        if let failure { for owner in owners { states[owner]?.dumpFailure = failure } }
        // Sockets TCP did not account for (unix, UDP, …): UDP's are said not counted; the rest noted.
        var unsorted = Set<UInt64>()
        for (inode, holders) in inodeOwners where holders.contains(where: { states[$0]?.tcpInodes[inode] == nil }) { unsorted.insert(inode) }
        guard !unsorted.isEmpty else { return }
        _ = namespace.dump.dump(protocol: InetDiag.udpProtocol, states: InetDiag.allStates, info: false) { socket in
            guard unsorted.contains(socket.inode) else { return }
            for owner in inodeOwners[socket.inode] ?? [] { states[owner]?.udpInodes.insert(socket.inode) }
        }
        for inode in unsorted {
            for owner in inodeOwners[inode] ?? [] {
                guard let state = states[owner], state.tcpInodes[inode] == nil, !state.udpInodes.contains(inode) else { continue }
                state.otherInodes.insert(inode)
            }
        }
    }

    private func lookUp(_ namespace: NetworkNamespace, owners: [ObjectIdentifier]) {
        // Each socket once, however many targets hold it.
        var wanted: [InetDiag.Socket] = []
        var holders: [UInt64: [ObjectIdentifier]] = [:]
        for owner in owners {
            guard let state = states[owner] else { continue }
            for (cookie, socket) in state.sockets[namespace.identity] ?? [:] {
                if holders[cookie] == nil { wanted.append(socket) }
                holders[cookie, default: []].append(owner)
            }
            state.sockets[namespace.identity] = [:]
        }
        let failure = namespace.dump.lookup(wanted) { index, now in
            // Gone (or only a TIME_WAIT stand-in, without counters): its end is its destroy event's.
            guard let now, now.state != InetDiag.tcpTimeWait, now.bytesAcked != nil else { return }
            for owner in holders[wanted[index].cookie] ?? [] {
                guard let state = states[owner] else { continue }
                state.sockets[namespace.identity, default: [:]][now.cookie] = now
                state.accounting.see(now)
            }
        }
        if let failure { for owner in owners { states[owner]?.dumpFailure = failure } }
    }
}
