package dev.fencing.agent.instrumentation.httpurlconnection;

import dev.fencing.agent.bootstrap.CallDepth;
import dev.fencing.agent.bootstrap.HttpAttempt;
import dev.fencing.agent.bootstrap.HttpHook;
import java.net.HttpURLConnection;
import net.bytebuddy.asm.Advice;

/**
 * java.net.HttpURLConnection.getResponseCode: the call that first reads the status (the field is still -1 on entry)
 * reports a 409 with Fencing-Rejected as a fence's rejection, once per connection (getResponseCode calls itself
 * through getInputStream, hence the depth counter); the app sees the response unchanged.
 * {@code this} is typed Object: the advice's signature must not name the class being loaded, or building the advice
 * while that class is defined would need the class itself.
 */
public final class ResponseCodeAdvice {
  private ResponseCodeAdvice() {}

  /** Returns true when this is the outermost call and the status was not read yet (getResponseCode nests). */
  @Advice.OnMethodEnter(suppress = Throwable.class)
  public static boolean enter(@Advice.FieldValue("responseCode") int before) {
    return CallDepth.RESPONSE_CODE.enter() && before == -1;
  }

  @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
  public static void exit(@Advice.This Object connection, @Advice.Enter boolean first, @Advice.Return int status) {
    CallDepth.RESPONSE_CODE.exit();
    if (first && status == 409) {
      HttpAttempt.responded(status, ((HttpURLConnection) connection).getHeaderField(HttpHook.REJECTED_HEADER));
    }
  }
}
