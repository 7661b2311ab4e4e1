import NIOCore
import NIOHTTP1
import NIOPosix
import PerfHUDSupport

/// `GET /metrics` and `GET /` over HTTP/1.1, on SwiftNIO's event loops: slow or malformed clients
/// are NIO's business (a 400 from its decoder, a read timeout from an idle handler), never the
/// sampling loop's.
public enum MetricsHTTPServer {
    /// One event loop: a scrape every few seconds needs no more, and each thread costs memory.
    static let eventLoops = MultiThreadedEventLoopGroup(numberOfThreads: 1)

    /// Binds `host:port`; the returned channel serves until closed.
    public static func bind(host: String, port: Int, metrics: DaemonMetrics) -> EventLoopFuture<Channel> {
        let bootstrap = ServerBootstrap(group: eventLoops)
            .serverChannelOption(ChannelOptions.backlog, value: 64)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            // On the channel's own event loop (where the initializer runs), through the pipeline's
            // synchronous operations: the handlers never cross threads, so none must be Sendable
            // (IdleStateHandler is not).
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    try pipeline.configureHTTPServerPipeline(withErrorHandling: true)
                    try pipeline.addHandlers([IdleStateHandler(readTimeout: .seconds(10)), MetricsHandler(metrics: metrics)])
                }
            }
            .childChannelOption(ChannelOptions.maxMessagesPerRead, value: 1)
        return bootstrap.bind(host: host, port: port)
    }
}

/// Answers one request per connection, then closes it.
final class MetricsHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let metrics: DaemonMetrics
    private var head: HTTPRequestHead?

    init(metrics: DaemonMetrics) { self.metrics = metrics }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let requestHead):
            head = requestHead
        case .body:
            break
        case .end:
            guard let head else { return }
            self.head = nil
            guard head.uri.split(separator: "?").first == "/metrics", head.method == .GET || head.method == .HEAD,
                  let readEveryFigure = metrics.readEveryFigure else { return respond(to: head, context: context) }
            // The figures of this moment: the sampling loop reads every figure of every target
            // first (between scrapes it reads RSS alone). Answered when it has, or after 2 s with
            // what was last read (a loop held up must not hold the scraper too).
            // The answer is given on the connection's event loop (NIOLoopBound checks it), whichever comes first.
            let loop = context.eventLoop, answer = NIOLoopBound(Answer(), eventLoop: loop)
            let reply = NIOLoopBound({ [self] in
                guard !answer.value.sent else { return }
                answer.value.sent = true
                respond(to: head, context: context)
            }, eventLoop: loop)
            loop.scheduleTask(in: .seconds(2)) { reply.value() }
            readEveryFigure { loop.execute { reply.value() } }
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent { context.close(promise: nil) } else { context.fireUserInboundEventTriggered(event) }
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) { context.close(promise: nil) }

    /// Whether a scrape waiting for its figures was answered (by them, or by the 2 s limit).
    private final class Answer { var sent = false }

    private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        let path = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        let status: HTTPResponseStatus
        let contentType: String
        let body: [UInt8]
        if head.method != .GET && head.method != .HEAD {
            (status, contentType, body) = (.methodNotAllowed, "text/plain; charset=utf-8", Array("method not allowed\n".utf8))
        } else if path == "/metrics" {
            (status, contentType, body) = (.ok, "text/plain; version=0.0.4; charset=utf-8", metrics.exposition())
        } else if path == "/" {
            (status, contentType, body) = (.ok, "text/html; charset=utf-8",
                Array("<html><head><title>perfhud</title></head><body><h1>perfhud</h1><p><a href=\"/metrics\">/metrics</a></p></body></html>\n".utf8))
        } else {
            (status, contentType, body) = (.notFound, "text/plain; charset=utf-8", Array("not found\n".utf8))
        }
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: contentType)
        headers.add(name: "Content-Length", value: String(body.count))
        headers.add(name: "Connection", value: "close")
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))), promise: nil)
        if head.method != .HEAD {
            var buffer = context.channel.allocator.buffer(capacity: body.count)
            buffer.writeBytes(body)
            context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        }
        // Closed once the answer is written: on the channel's own loop, where the context may be used.
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in bound.value.close(promise: nil) }
    }
}
