package dev.fencing.agent.instrumentation.jdbc;

import dev.fencing.agent.bootstrap.Fencing;
import dev.fencing.agent.instrumentation.api.AgentContext;
import dev.fencing.agent.instrumentation.api.InstrumentationModule;
import dev.fencing.agent.instrumentation.api.TypeInstrumentation;
import java.util.List;

/** JDBC: any driver, any pool. Switch: fencing.instrumentation.jdbc.enabled. */
public final class JdbcInstrumentationModule implements InstrumentationModule {
  @Override
  public String name() {
    return "jdbc";
  }

  @Override
  public List<TypeInstrumentation> typeInstrumentations() {
    return List.of(new StatementInstrumentation(), new ConnectionInstrumentation(), new CopyManagerInstrumentation());
  }

  @Override
  public List<String> requiredJdkModules() {
    return List.of("java.sql");
  }

  @Override
  public void install(AgentContext context) {
    Fencing.installJdbc(new JdbcFencing(context.config().fencedJdbc(), context.config().jdbcPooler(),
        context.config().jdbcWriteFunctions(), context.config().jdbcIdleInTransactionTimeout(),
        context.rejections(), context.config().exemptJdbc(), context.sideEffects(), context.inventory(),
        context.config().lock()));
  }
}
