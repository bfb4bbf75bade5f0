package reactor.core.scheduler;

/**
 * Stands in for reactor-core's marker of threads that must never block (Reactor Netty's event loops, Reactor's
 * parallel scheduler): the policy recognises it by name, without reactor-core on its class path.
 */
public interface NonBlocking {}
