package dev.fencing.fence.spring;

import dev.fencing.fence.store.FenceStore;
import dev.fencing.fence.store.InMemoryFenceStore;
import dev.fencing.fence.store.JdbcFenceStore;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * The fence store the HTTP fence shares with the SQL fence: {@link JdbcFenceStore} on the application's DataSource
 * (table {@code fencing_fence}), or {@link InMemoryFenceStore} ({@code fencing.fence.store}). After Spring Boot's
 * DataSource auto-configuration, so that {@code store: auto} sees the application's pool. An application bean of type
 * {@link FenceStore} replaces it.
 */
@AutoConfiguration(afterName = "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration")
@ConditionalOnProperty(prefix = FencingProperties.PREFIX, name = "enabled", matchIfMissing = true)
@EnableConfigurationProperties(FencingProperties.class)
public class FencingAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean
  public FenceStore fencingFenceStore(FencingProperties properties, ObjectProvider<DataSource> dataSource) {
    DataSource ds = dataSource(properties, dataSource);
    if (ds == null) {
      return new InMemoryFenceStore();
    }
    try {
      return new JdbcFenceStore(ds, properties.getJdbc().getSchema());
    } catch (IllegalArgumentException e) {
      throw new IllegalStateException("fencing: " + FencingProperties.PREFIX + ".jdbc.schema: " + e.getMessage(), e);
    }
  }

  /** The DataSource the fences keep their state in, null for the in-memory stores. */
  static DataSource dataSource(FencingProperties properties, ObjectProvider<DataSource> dataSource) {
    switch (properties.getStore()) {
      case MEMORY:
        return null;
      case JDBC:
        DataSource ds = dataSource.getIfAvailable();
        if (ds == null) {
          throw new IllegalStateException("fencing: " + FencingProperties.PREFIX + ".store=jdbc needs the "
              + "application's DataSource (spring.datasource.url), and there is none; or set "
              + FencingProperties.PREFIX + ".store=memory, which forgets the fence on restart");
        }
        return ds;
      default:
        return dataSource.getIfAvailable();
    }
  }
}
