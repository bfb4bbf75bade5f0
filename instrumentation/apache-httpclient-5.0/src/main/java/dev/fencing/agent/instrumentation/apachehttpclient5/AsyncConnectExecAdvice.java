package dev.fencing.agent.instrumentation.apachehttpclient5;

import dev.fencing.agent.bootstrap.FencingBlockedException;
import dev.fencing.agent.bootstrap.HttpAttempt;
import dev.fencing.agent.bootstrap.RequestHeaders;
import net.bytebuddy.asm.Advice;
import org.apache.hc.client5.http.async.AsyncExecCallback;
import org.apache.hc.client5.http.async.AsyncExecChain;
import org.apache.hc.core5.http.HttpHost;
import org.apache.hc.core5.http.HttpRequest;

/**
 * AsyncConnectExec.execute(request, entityProducer, scope, chain, callback), once per attempt. A blocked attempt
 * fails the exec callback and skips the method, so no connection is leased and nothing is written: the failure
 * travels up the chain (retry strategies decline it, see NoRetryWhenBlockedAdvice) to the client, which fails the
 * returned future and calls the application's FutureCallback.failed. Tagging sets the pair on the attempt's request,
 * a copy the async chain makes of the caller's request (and again for each retry and redirect). Object-typed
 * parameters: see ConnectExecAdvice.
 */
public final class AsyncConnectExecAdvice {
  private AsyncConnectExecAdvice() {}

  /** Returns true when the attempt was blocked (the method body is then skipped). */
  @Advice.OnMethodEnter(skipOn = Advice.OnNonDefaultValue.class)
  public static boolean enter(@Advice.Argument(0) Object request, @Advice.Argument(2) Object scope,
      @Advice.Argument(4) Object callback) {
    FencingBlockedException blocked = null;
    try {
      HttpRequest r = (HttpRequest) request;
      HttpHost target = ((AsyncExecChain.Scope) scope).route.getTargetHost();
      RequestHeaders.APACHE_HTTPCLIENT_5.tag(r,
          HttpAttempt.decide(r.getMethod(), target.getSchemeName(), target.getHostName(), target.getPort()));
    } catch (Throwable blockedOrAgentError) {
      blocked = HttpAttempt.blocked(blockedOrAgentError); // null for an agent error: the attempt goes on untagged
    }
    if (blocked != null) {
      // Outside the try: the callback is the client's (and so the application's) code, its exceptions are its own.
      ((AsyncExecCallback) callback).failed(blocked);
    }
    return blocked != null;
  }
}
