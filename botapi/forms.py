"""The owner's form: register a bot account."""

from __future__ import annotations

from django import forms

from botapi.models import BotAccount


class RegisterForm(forms.ModelForm):
    class Meta:
        model = BotAccount
        fields = ("name", "description", "contact")
        widgets = {"description": forms.Textarea(attrs={"rows": 3})}

    def clean_name(self) -> str:
        name: str = self.cleaned_data["name"]
        if BotAccount.objects.filter(name=name).exists():
            raise forms.ValidationError("A bot of that name is registered already.")
        return name


class SettingsForm(forms.ModelForm):
    """The owner's settings of a bot: open challenges and its cap of tables."""

    class Meta:
        model = BotAccount
        fields = ("accepts_challenges", "max_tables")
