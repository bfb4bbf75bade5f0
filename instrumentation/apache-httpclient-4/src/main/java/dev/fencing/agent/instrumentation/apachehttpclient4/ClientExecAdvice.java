package dev.fencing.agent.instrumentation.apachehttpclient4;

import dev.fencing.agent.bootstrap.Channel;
import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.bootstrap.Fencing;
import dev.fencing.agent.bootstrap.FencingBlockedException;
import dev.fencing.agent.bootstrap.HttpHook;
import java.io.IOException;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.implementation.bytecode.assign.Assigner;
import org.apache.http.Header;
import org.apache.http.HttpHost;
import org.apache.http.HttpRequest;
import org.apache.http.HttpResponse;
import org.apache.http.conn.routing.HttpRoute;

/**
 * MainClientExec/MinimalClientExec.execute(route, request, context, execAware), once per attempt. Decides for the
 * attempt's method and target (the route's target host: the origin, also behind a proxy; the default route planner
 * has resolved its port); a blocked attempt throws before a connection is leased, so nothing reaches the network, and
 * the IOException travels up the chain to the application as any I/O failure does (RetryExec does not retry it, see
 * NoRetryWhenBlockedAdvice). Tagging sets (replaces) the pair on the request: the chain only works on an
 * HttpRequestWrapper, which holds its own copy of the caller's headers, so the caller's request object is never
 * changed, and a retry that passes the same wrapper down again gets its values replaced, not added. On return, a 409
 * with Fencing-Rejected is reported, once per response. Parameters are typed Object: the advice class is loaded by
 * the agent's loader, which cannot see the library (the casts in the body are only resolved once inlined).
 */
public final class ClientExecAdvice {
  private ClientExecAdvice() {}

  @Advice.OnMethodEnter
  public static void enter(@Advice.Argument(0) Object route, @Advice.Argument(1) Object request)
      throws IOException {
    try {
      HttpRequest r = (HttpRequest) request;
      HttpHost target = ((HttpRoute) route).getTargetHost();
      Decision d = Fencing.http().decide(r.getRequestLine().getMethod(), target.getSchemeName(),
          target.getHostName(), target.getPort());
      if (d.isBlock()) {
        throw new FencingBlockedException(Channel.HTTP, d);
      }
      if (d.isTag()) {
        String[] h = d.httpHeaders();
        for (int i = 0; i < h.length; i += 2) {
          r.setHeader(h[i], h[i + 1]);
        }
        if (d.grant() == null) {
          r.removeHeaders(HttpHook.GRANT_HEADER); // a re-sent wrapper's grant is not this token's
        }
      }
    } catch (IOException blocked) {
      throw blocked; // FencingBlockedException: nothing else in here throws an IOException
    } catch (Throwable agentError) {
      try {
        Fencing.hookFailed(Channel.HTTP, false, agentError); // counted and logged once per interval
      } catch (Throwable unreachable) {
        // the agent's classes are out of this loader's reach: nothing to count with
      }
    }
  }

  @Advice.OnMethodExit(suppress = Throwable.class)
  public static void exit(@Advice.Return(typing = Assigner.Typing.DYNAMIC) Object response) {
    if (response != null) {
      HttpResponse r = (HttpResponse) response;
      if (r.getStatusLine().getStatusCode() == 409) {
        Header h = r.getFirstHeader(HttpHook.REJECTED_HEADER);
        Fencing.http().responded(409, h == null ? null : h.getValue());
      }
    }
  }
}
