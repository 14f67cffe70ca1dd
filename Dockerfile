# One image for migrate, web, worker and beat; they differ only in their command (see docker-compose.yml).
FROM python:3.11-slim
# ENV_FILE empty: the image is configured by its environment alone, never by a stray development .env.
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 ENV_FILE=""
WORKDIR /app
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt
COPY . .
RUN DEBUG=1 python manage.py collectstatic --no-input
RUN useradd --create-home moraljudge
USER moraljudge
EXPOSE 8000
CMD ["gunicorn", "moraljudge.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3", "--worker-class", "gthread", "--threads", "4"]
